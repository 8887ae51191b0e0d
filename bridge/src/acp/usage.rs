//! An agent's `usage_update`, read once: the context it uses of its window,
//! and the session's running cost. Tolerant: a figure that is missing or of
//! another type reads as not reported.

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
}
