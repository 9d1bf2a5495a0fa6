//! A scripted agent loop through chef's single dispatch entry point: a blocked tool, a
//! namespace call, a toolkit load and a memory write, each handled by one `match`. The
//! loop keeps its progress in chef's dynamic state, which rides the last user turn.
//!
//! Run with `cargo run -p chef-examples --example agent_loop`. Offline: the "model" is a
//! script of the calls a model would make.

mod common;

use chef::{Chef, ChefConfig, Routed, ToolGroup, dynamic::Placement, memory::Memory};
use chef_ir::{Content, Message, Target, ToolCall, ToolDefinition, ToolResult};
use serde_json::{Value, json};

fn tool(name: &str, description: &str, params: Value) -> ToolDefinition {
    ToolDefinition::new(name, params).with_description(description)
}

fn object(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

/// Your own tools: here they just echo.
fn dispatch(name: &str, args: &Value) -> String {
    format!("{name} ran with {args}")
}

async fn run() -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let path = json!({"path": {"type": "string"}});
    let mut chef = Chef::new(ChefConfig::default().with_tool_change_announcements(true))
        .with_memory(Memory::new());
    chef.tools_mut().register_namespaces(vec![ToolGroup::new(
        "file_ops",
        "Work with files in the project.",
        vec![
            tool("read_file", "Read a file.", object(path.clone(), &["path"])),
            tool("delete_file", "Delete a file.", object(path, &["path"])),
        ],
    )])?;
    chef.tools_mut().register_toolkits(vec![ToolGroup::new(
        "Weather",
        "Forecasts and current conditions.",
        vec![tool(
            "get_weather",
            "Current weather for a city.",
            object(json!({"city": {"type": "string"}}), &["city"]),
        )],
    )])?;
    chef.set_system_prompt(vec![Message::system("You are a careful assistant.")]);
    chef.tools_mut().set_blocked(["delete_file"]);
    chef.push(Message::user(
        "Tidy the repo, check Oslo's weather, remember I like metric.",
    ));

    // What a model would do over a few steps.
    let script = vec![
        ToolCall::new(
            "c1",
            "file_ops",
            json!({"action": "delete_file", "args": {"path": "old.log"}}),
        ),
        ToolCall::new(
            "c2",
            "file_ops",
            json!({"action": "read_file", "args": {"path": "README.md"}}),
        ),
        ToolCall::new("c3", "load_toolkit", json!({"toolkit_name": "Weather"})),
        ToolCall::new("c4", "get_weather", json!({"city": "Oslo"})),
        ToolCall::new(
            "c5",
            "create_memory",
            json!({"key": "units", "value": "metric"}),
        ),
    ];

    let mut log = Vec::new();
    let mut done: Vec<String> = Vec::new();
    for call in script {
        // The loop's own view of the task, restated each turn after the user's words.
        chef.layers_mut()
            .set_dynamic_state(&json!({"done": done}), Placement::LastUser)?;
        // Overflow (a requested new_context, a long history) runs first; then the bytes.
        let payload = chef.compile_async(Target::Anthropic).await?; // send payload.body
        log.push(format!(
            "turn {}: {} bytes, tools {:?}, state {:?}",
            payload.meta.turn,
            payload.body.len(),
            payload.meta.wire_tools,
            chef.layers().dynamic_state_xml().replace('\n', "")
        ));
        chef.push(Message::assistant_with(vec![Content::ToolCall(
            call.clone(),
        )]));

        let (text, is_error) = match chef.route(&call) {
            Routed::Call(c) => (dispatch(c.name.as_str(), &c.arguments), false),
            Routed::Owned(owned) => {
                let reply = chef.handle_tool(&owned).await?;
                (reply.text, reply.is_error)
            }
            other => {
                let is_error = other.is_error();
                (other.reply().unwrap_or_default().to_owned(), is_error)
            }
        };
        log.push(format!("  {} -> {text}", call.name));
        if !is_error {
            done.push(call.name.as_str().to_owned());
        }
        let result = if is_error {
            ToolResult::error(call.id, text)
        } else {
            ToolResult::text(call.id, text)
        };
        chef.push(Message::tool_results(vec![result]));
    }
    Ok(log)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let log = tokio::runtime::Builder::new_current_thread()
        .build()?
        .block_on(run())?;
    common::print_log(&log);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_loop_refuses_the_blocked_tool_and_handles_the_rest() {
        let log = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(super::run())
            .unwrap();
        super::common::assert_log_contains(
            &log,
            &[
                "file_ops -> Tool \"delete_file\" is currently blocked.",
                "file_ops -> read_file ran with",
                "load_toolkit -> Loaded toolkit \"Weather\"",
                "get_weather -> get_weather ran with",
                "create_memory -> Created context://memory/units.",
                // The refused delete is not in the state; the three calls that ran are.
                "state \"<dynamic_state>  <done>  <item>file_ops</item>  <item>load_toolkit</item>  <item>get_weather</item></done></dynamic_state>\"",
            ],
        );
    }
}
