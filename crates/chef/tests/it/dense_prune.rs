//! Ranked pruning with an embedding model (issue 15): the hybrid ranks when one is set.

use std::sync::Arc;

use chef::{
    compress::search::dense::{DenseConfig, ModelKind, WordTableEmbedder},
    prune::{Pruner, Strategy},
};
use chef_ir::ToolDefinition;
use serde_json::json;

fn tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new("uber_request", json!({"type": "object"}))
            .with_description("Request a car to a destination."),
        ToolDefinition::new("weather_now", json!({"type": "object"}))
            .with_description("Current weather for a city."),
    ]
}

fn table() -> WordTableEmbedder {
    WordTableEmbedder::new("toy", ModelKind::Static, 2)
        .with_word("car", [1.0, 0.0])
        .with_word("ride", [0.9, 0.1])
        .with_word("weather", [0.0, 1.0])
        .with_word("rain", [0.1, 0.9])
}

#[test]
fn rank_by_task_uses_the_hybrid_when_an_embedder_is_set() {
    let mut pruner = Pruner::new(Strategy::Union);
    pruner.register_tools(tools()).unwrap();
    assert_eq!(pruner.rank_by_task("will it rain", 1).kept, 0);
    assert!(pruner.hybrid_index().is_none());

    pruner.set_embedder(DenseConfig::new(Arc::new(table())));
    let ranked = pruner.rank_by_task("will it rain", 1);
    assert_eq!(ranked.tools[0].name.as_str(), "weather_now");
    assert_eq!(ranked.removed.len(), 1);
    assert_eq!(pruner.hybrid_index().unwrap().len(), 2);

    // Re-registering rebuilds the hybrid over the new tools.
    pruner.register_tools(tools()[..1].to_vec()).unwrap();
    assert_eq!(pruner.hybrid_index().unwrap().len(), 1);
    assert_eq!(
        pruner.rank_by_task("book a ride", 3).tools[0].name.as_str(),
        "uber_request"
    );
}
