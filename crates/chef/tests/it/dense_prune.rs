//! Ranked pruning with an embedding model (issue 15): the hybrid ranks when one is set.

use std::sync::Arc;

use chef::{
    compress::search::dense::DenseConfig,
    prune::{Pruner, Strategy},
};

use crate::support::{toy_table, two_tools};

#[test]
fn rank_by_task_uses_the_hybrid_when_an_embedder_is_set() {
    let mut pruner = Pruner::new(Strategy::Union);
    pruner.register_tools(two_tools()).unwrap();
    // By default the bundled static model ranks with BM25F.
    assert!(
        pruner.ranker().starts_with("static-bundled:"),
        "{}",
        pruner.ranker()
    );
    assert!(pruner.hybrid_index().is_some());
    // Lexical ranking: BM25F alone, which abstains on a request none of the words fit.
    pruner.set_lexical_ranking();
    assert_eq!(pruner.ranker(), "lexical");
    assert_eq!(pruner.rank_by_task("will it rain", 1).kept, 0);
    assert!(pruner.hybrid_index().is_none());

    pruner.set_embedder(DenseConfig::new(Arc::new(toy_table())));
    let ranked = pruner.rank_by_task("will it rain", 1);
    assert_eq!(ranked.tools[0].name.as_str(), "weather_now");
    assert_eq!(ranked.removed.len(), 1);
    assert_eq!(pruner.hybrid_index().unwrap().len(), 2);

    // Re-registering rebuilds the hybrid over the new tools.
    pruner.register_tools(two_tools()[..1].to_vec()).unwrap();
    assert_eq!(pruner.hybrid_index().unwrap().len(), 1);
    assert_eq!(
        pruner.rank_by_task("book a ride", 3).tools[0].name.as_str(),
        "uber_request"
    );
}
