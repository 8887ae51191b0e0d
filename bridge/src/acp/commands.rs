//! The slash commands an agent offers (`availableCommands`, in a session
//! answer or an `available_commands_update`), read once. A field that is
//! not a string is `None`, and an entry that is not an object has none:
//! what the panel gets for those is decided where it is written.

use serde_json::Value;

/// One command an agent offers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AvailableCommand {
    pub name: Option<String>,
    pub description: Option<String>,
    /// `input.hint`: what the command's argument is.
    pub hint: Option<String>,
}

impl AvailableCommand {
    /// The commands of an `availableCommands` list; `None` when it is no list.
    pub fn read_list(list: &Value) -> Option<Vec<AvailableCommand>> {
        let text = |v: &Value| v.as_str().map(str::to_string);
        let commands = list.as_array()?.iter().map(|c| AvailableCommand {
            name: text(&c["name"]),
            description: text(&c["description"]),
            hint: text(&c["input"]["hint"]),
        });
        Some(commands.collect())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fields_of_another_type_and_entries_that_are_no_objects_read_as_none() {
        let list = json!([
            {"name": "plan", "description": "Plan first", "input": {"hint": "what to plan"}},
            {"name": 7, "description": null, "input": "x"},
            "compact",
        ]);
        let commands = AvailableCommand::read_list(&list).unwrap();
        assert_eq!(
            commands,
            [
                AvailableCommand {
                    name: Some("plan".into()),
                    description: Some("Plan first".into()),
                    hint: Some("what to plan".into()),
                },
                AvailableCommand::default(),
                AvailableCommand::default(),
            ]
        );
        assert_eq!(AvailableCommand::read_list(&json!({"name": "plan"})), None);
    }
}
