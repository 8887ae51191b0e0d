//! An agent's `usage_update`, read once: the context it uses of its window,
//! and the session's running cost; and the token counts it reports for a
//! turn ([`Tokens`]). Tolerant: a figure that is missing or of another type
//! reads as not reported.

use serde_json::Value;

/// What the agent's last `usage_update` reported.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    /// Tokens of the context in use.
    pub used: Option<u64>,
    /// The context window, in tokens.
    pub size: Option<u64>,
    /// The session's cost so far.
    pub cost: Option<Cost>,
}

/// A cost as ACP reports it: an amount and its currency (USD when unnamed).
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    pub amount: f64,
    pub currency: Option<String>,
}

impl Cost {
    /// The amount, when it is in USD (Claude's results carry USD only).
    pub fn usd(&self) -> Option<f64> {
        let usd = self
            .currency
            .as_deref()
            .is_none_or(|c| c.eq_ignore_ascii_case("USD"));
        usd.then_some(self.amount)
    }

    /// The currency, for a diagnostic.
    pub fn currency(&self) -> &str {
        self.currency.as_deref().unwrap_or("USD")
    }
}

impl Usage {
    /// Reads a `usage_update` (the update object).
    pub fn read(update: &Value) -> Usage {
        let cost = &update["cost"];
        Usage {
            used: update["used"].as_u64(),
            size: update["size"].as_u64(),
            cost: cost["amount"].as_f64().map(|amount| Cost {
                amount,
                currency: cost["currency"].as_str().map(str::to_string),
            }),
        }
    }
}

/// The token counts an agent reports for a turn, in ACP's `Usage` terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub thought: u64,
    pub cached_read: u64,
    pub cached_write: u64,
}

impl Tokens {
    /// A prompt answer's `usage` (a count missing or of another type is 0).
    pub fn read(usage: &Value) -> Tokens {
        Tokens::spelled(usage, false)
    }

    /// Counts an agent put into `_meta`, at `meta.usage` or `meta` itself,
    /// in ACP's camelCase names or Claude's snake_case ones; `None` when
    /// neither an input nor an output count is there.
    pub fn from_meta(meta: &Value) -> Option<Tokens> {
        let u = if meta["usage"].is_object() {
            &meta["usage"]
        } else {
            meta
        };
        let reported = [
            "inputTokens",
            "input_tokens",
            "outputTokens",
            "output_tokens",
        ];
        (reported.iter().any(|k| u[*k].is_u64())).then(|| Tokens::spelled(u, true))
    }

    /// The counts in `u`, under ACP's names (`snake_too`: or else Claude's).
    fn spelled(u: &Value, snake_too: bool) -> Tokens {
        let n = |camel: &str, snake: &str| {
            let names = [camel, snake];
            let names = if snake_too { &names[..] } else { &names[..1] };
            names.iter().find_map(|k| u[*k].as_u64()).unwrap_or(0)
        };
        Tokens {
            input: n("inputTokens", "input_tokens"),
            output: n("outputTokens", "output_tokens"),
            thought: n("thoughtTokens", "thoughtTokens"),
            cached_read: n("cachedReadTokens", "cache_read_input_tokens"),
            cached_write: n("cachedWriteTokens", "cache_creation_input_tokens"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// (update, used, size, cost in USD)
    #[test]
    fn a_usage_update_reads_its_figures_and_only_a_usd_cost_counts() {
        let cases = [
            (
                json!({"used": 5, "size": 10, "cost": {"amount": 0.25, "currency": "USD"}}),
                Some(5),
                Some(10),
                Some(0.25),
            ),
            (
                json!({"used": 5, "cost": {"amount": 0.25}}),
                Some(5),
                None,
                Some(0.25),
            ),
            (
                json!({"cost": {"amount": 1.5, "currency": "eur"}}),
                None,
                None,
                None,
            ),
            (
                json!({"used": "5", "size": -1, "cost": {"amount": "1"}}),
                None,
                None,
                None,
            ),
        ];
        for (u, used, size, usd) in cases {
            let got = Usage::read(&u);
            assert_eq!((got.used, got.size), (used, size), "{u}");
            assert_eq!(got.cost.as_ref().and_then(Cost::usd), usd, "{u}");
        }
    }

    #[test]
    fn token_counts_read_in_either_spelling_from_meta_and_in_acps_from_an_answer() {
        let counts = |input, output, thought, cached_read, cached_write| Tokens {
            input,
            output,
            thought,
            cached_read,
            cached_write,
        };
        let acp = json!({"inputTokens": 10, "outputTokens": 5, "thoughtTokens": 2,
            "cachedReadTokens": 3, "cachedWriteTokens": 1});
        let claude = json!({"input_tokens": 10, "output_tokens": 5,
            "cache_read_input_tokens": 3, "cache_creation_input_tokens": 1});
        assert_eq!(Tokens::read(&acp), counts(10, 5, 2, 3, 1));
        assert_eq!(Tokens::read(&claude), Tokens::default());
        assert_eq!(
            Tokens::from_meta(&json!({"usage": acp})),
            Some(counts(10, 5, 2, 3, 1))
        );
        assert_eq!(Tokens::from_meta(&claude), Some(counts(10, 5, 0, 3, 1)));
        assert_eq!(Tokens::from_meta(&json!({"outputTokens": "5"})), None);
        assert_eq!(
            Tokens::from_meta(&json!({"usage": 7, "outputTokens": 4})),
            Some(counts(0, 4, 0, 0, 0))
        );
    }
}
