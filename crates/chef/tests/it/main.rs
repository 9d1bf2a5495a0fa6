//! Integration tests for chef: the store (one conformance suite for every backend, plus
//! file-system specifics), memory, snapshot files and crash safety.
#![cfg(test)]

#[macro_use]
mod support;

mod blocked_suggestions;
mod cache_audit;
mod chunked_body;
mod compile_cache;
mod concurrency;
mod conformance_session;
mod conformance_tools;
mod crash;
mod dense_prune;
mod discovery;
mod dynamic_state;
mod errors;
mod faulty;
mod final_answer;
mod fork;
mod fuzz;
mod gate_bypass;
mod handles;
mod hooks;
mod hostile;
mod journal;
mod limits;
mod limits_config;
mod load;
mod memory;
mod memory_retry;
mod offload;
mod output;
mod overflow;
#[cfg(feature = "postgres")]
mod pg;
mod provider_goldens;
mod pruning_task;
mod resume_all;
mod seams;
mod session;
mod session_props;
mod skills;
mod snapshot_file;
mod snapshot_integrity;
mod snapshot_tools;
mod store_conformance;
mod store_fs;
mod store_load;
#[cfg(feature = "postgres")]
mod store_pg;
mod store_processes;
mod text_calls;
mod tool_search;
mod wire_names;

#[path = "../../../../tests/support/child.rs"]
mod child;
#[path = "../../../../tests/support/fixtures.rs"]
mod fixtures;

pub(crate) use fixtures::fixture;
