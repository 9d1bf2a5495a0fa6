//! The tool-vector cache: hits, misses, invalidation, atomic and stable files.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use chef_compress::search::dense::{
    EmbedError, Embedder, HybridIndex, HybridOptions, ModelKind, WordTableEmbedder, tool_text,
};
use chef_dense::{CachedEmbedder, VectorCache};
use chef_ir::ToolDefinition;
use serde_json::json;

/// The hand-made table, counting the texts it is asked to embed.
#[derive(Debug)]
struct Counting {
    table: WordTableEmbedder,
    texts: AtomicUsize,
}

impl Counting {
    fn new(id: &str) -> Arc<Self> {
        Arc::new(Self {
            table: WordTableEmbedder::new(id, ModelKind::Static, 2)
                .with_word("car", [1.0, 0.0])
                .with_word("ride", [0.9, 0.1])
                .with_word("weather", [0.0, 1.0])
                .with_word("rain", [0.1, 0.9]),
            texts: AtomicUsize::new(0),
        })
    }
    fn embedded(&self) -> usize {
        self.texts.load(Ordering::Relaxed)
    }
}

impl Embedder for Counting {
    fn model_id(&self) -> &str {
        self.table.model_id()
    }
    fn kind(&self) -> ModelKind {
        self.table.kind()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.texts.fetch_add(texts.len(), Ordering::Relaxed);
        self.table.embed(texts)
    }
}

fn tools(weather_description: &str) -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new("uber_request", json!({"type": "object"}))
            .with_description("Request a car."),
        ToolDefinition::new("weather_now", json!({"type": "object"}))
            .with_description(weather_description),
    ]
}

#[test]
fn a_catalogue_is_embedded_once_then_read_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let model = Counting::new("toy-v1");
    let cached = Arc::new(CachedEmbedder::new(
        model.clone(),
        VectorCache::new(dir.path()),
    ));
    let options = HybridOptions::for_kind(ModelKind::Static);

    let first = HybridIndex::build(&tools("Weather now."), cached.clone(), options).unwrap();
    assert_eq!((model.embedded(), cached.counts()), (2, (0, 2)));
    let file = VectorCache::new(dir.path()).file_for("toy-v1");
    assert!(file.is_file());

    // Same texts: all hits, the model is not asked (a fresh wrapper reads the file).
    let again = Arc::new(CachedEmbedder::new(
        model.clone(),
        VectorCache::new(dir.path()),
    ));
    let second = HybridIndex::build(&tools("Weather now."), again.clone(), options).unwrap();
    assert_eq!((model.embedded(), again.counts()), (2, (2, 0)));
    for q in ["car ride", "rain"] {
        assert_eq!(first.search(q, 2).unwrap(), second.search(q, 2).unwrap());
    }

    // Requests are never cached.
    let before = model.embedded();
    second.search("ride", 1).unwrap();
    assert_eq!(model.embedded(), before + 1);
    assert_eq!(again.counts(), (2, 0));
}

#[test]
fn a_changed_tool_text_misses_and_the_others_hit() {
    let dir = tempfile::tempdir().unwrap();
    let model = Counting::new("toy-v1");
    let options = HybridOptions::for_kind(ModelKind::Static);
    let cached = Arc::new(CachedEmbedder::new(
        model.clone(),
        VectorCache::new(dir.path()),
    ));
    HybridIndex::build(&tools("Weather now."), cached, options).unwrap();

    let cached = Arc::new(CachedEmbedder::new(
        model.clone(),
        VectorCache::new(dir.path()),
    ));
    let index = HybridIndex::build(&tools("Is rain coming?"), cached.clone(), options).unwrap();
    assert_eq!(cached.counts(), (1, 1));
    assert_eq!(model.embedded(), 3);
    // The new text's vector is the one used: "rain" ranks the weather tool first.
    assert_eq!(
        index.search("rain", 1).unwrap().hits[0].tool.as_str(),
        "weather_now"
    );
    // Both versions stay cached (another catalogue may use the old one).
    let entries = VectorCache::new(dir.path()).load("toy-v1").unwrap();
    assert_eq!(entries.len(), 3);
    let old = chef_dense::key("toy-v1", &tool_text(&tools("Weather now.")[1]));
    assert!(entries.contains_key(&old));
}

#[test]
fn another_model_id_never_reads_these_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let options = HybridOptions::for_kind(ModelKind::Static);
    let v1 = Counting::new("toy-v1");
    let cached = Arc::new(CachedEmbedder::new(v1, VectorCache::new(dir.path())));
    HybridIndex::build(&tools("Weather now."), cached, options).unwrap();

    let v2 = Counting::new("toy-v2");
    let cached = Arc::new(CachedEmbedder::new(
        v2.clone(),
        VectorCache::new(dir.path()),
    ));
    HybridIndex::build(&tools("Weather now."), cached.clone(), options).unwrap();
    assert_eq!((v2.embedded(), cached.counts()), (2, (0, 2)));
    let cache = VectorCache::new(dir.path());
    assert_ne!(cache.file_for("toy-v1"), cache.file_for("toy-v2"));
    assert_ne!(
        chef_dense::key("toy-v1", "same text"),
        chef_dense::key("toy-v2", "same text")
    );
}

#[test]
fn a_corrupt_cache_file_is_rebuilt_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let options = HybridOptions::for_kind(ModelKind::Static);
    let model = Counting::new("toy-v1");
    let cache = VectorCache::new(dir.path());
    let cached = Arc::new(CachedEmbedder::new(model.clone(), cache.clone()));
    HybridIndex::build(&tools("Weather now."), cached, options).unwrap();
    let file = cache.file_for("toy-v1");
    let good = std::fs::read(&file).unwrap();

    for broken in [
        &good[..good.len() - 3],
        b"not a cache at all".as_slice(),
        &[],
    ] {
        std::fs::write(&file, broken).unwrap();
        assert!(cache.load("toy-v1").unwrap().is_empty());
        let cached = Arc::new(CachedEmbedder::new(model.clone(), cache.clone()));
        HybridIndex::build(&tools("Weather now."), cached.clone(), options).unwrap();
        assert_eq!(cached.counts(), (0, 2));
        // Rewritten whole, and byte-identical to the first write (entries are sorted).
        assert_eq!(std::fs::read(&file).unwrap(), good);
    }
    // No temporary files are left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn an_unwritable_cache_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, b"x").unwrap();
    let model = Counting::new("toy-v1");
    let cached = Arc::new(CachedEmbedder::new(
        model,
        VectorCache::new(blocker.join("sub")),
    ));
    let err = HybridIndex::build(
        &tools("Weather now."),
        cached,
        HybridOptions::for_kind(ModelKind::Static),
    )
    .unwrap_err();
    assert!(err.to_string().contains("tool-vector cache"), "{err}");
}

#[test]
fn loading_a_directory_without_a_model_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = chef_dense::load(dir.path()).unwrap_err();
    if cfg!(feature = "dense") {
        assert!(
            matches!(
                err,
                chef_dense::Error::MissingFile {
                    file: "config.json",
                    ..
                }
            ),
            "{err}"
        );
    } else {
        assert!(matches!(err, chef_dense::Error::NotBuilt { .. }), "{err}");
    }
}
