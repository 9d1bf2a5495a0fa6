//! [`WordTableEmbedder`]: a hand-made [`Embedder`] for tests and examples.

use super::{EmbedError, Embedder, ModelKind};

/// A hand-made embedding table: a text's vector is the mean of the vectors of its known
/// words (lowercased, split on anything but letters and digits). Deterministic and
/// dependency-free, for tests and examples; no substitute for a real model.
#[derive(Debug, Clone)]
pub struct WordTableEmbedder {
    id: String,
    kind: ModelKind,
    dim: usize,
    words: std::collections::BTreeMap<String, Vec<f32>>,
}

impl WordTableEmbedder {
    /// An empty table of `dim`-dimensional vectors.
    pub fn new(id: impl Into<String>, kind: ModelKind, dim: usize) -> Self {
        Self {
            id: id.into(),
            kind,
            dim,
            words: std::collections::BTreeMap::new(),
        }
    }

    /// With a word's vector (lowercased; padded with zeros or cut to the dimension).
    #[must_use]
    pub fn with_word(mut self, word: &str, vector: impl IntoIterator<Item = f32>) -> Self {
        let mut v: Vec<f32> = vector.into_iter().take(self.dim).collect();
        v.resize(self.dim, 0.0);
        self.words.insert(word.to_lowercase(), v);
        self
    }

    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut sum = vec![0.0; self.dim];
        let mut count = 0_u32;
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            if let Some(v) = self.words.get(&word.to_lowercase()) {
                for (s, x) in sum.iter_mut().zip(v) {
                    *s += x;
                }
                count += 1;
            }
        }
        if count > 0 {
            let n = count as f32;
            sum.iter_mut().for_each(|s| *s /= n);
        }
        sum
    }
}

impl Embedder for WordTableEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn kind(&self) -> ModelKind {
        self.kind
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}
