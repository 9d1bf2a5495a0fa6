//! A BERT encoder (the architecture of all-MiniLM-L6-v2 and the other BERT sentence
//! transformers) on candle's tensors and layers: token, position and segment embeddings,
//! then `num_hidden_layers` blocks of multi-head self-attention and a feed-forward network,
//! each followed by a residual sum and layer normalisation. Inference only: no dropout, no
//! pooler, no heads. Weights are read by their Hugging Face names, with or without a
//! `bert.` (or `<model_type>.`) prefix.
//!
//! Written for chef rather than taken from candle-transformers, whose build compiles every
//! model it ships (over two minutes of CPU in the test build) for the one chef runs.

use candle_core::{D, DType, Module, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder, embedding, layer_norm, linear};
use serde::Deserialize;

/// The activation between the feed-forward layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Activation {
    /// GELU with the exact error function (BERT's `gelu`).
    Gelu,
    /// GELU's tanh approximation.
    #[serde(alias = "gelu_new", alias = "gelu_pytorch_tanh")]
    GeluApproximate,
    /// ReLU.
    Relu,
}

/// The fields of a BERT `config.json` the encoder needs.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Config {
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    hidden_act: Activation,
    max_position_embeddings: usize,
    type_vocab_size: usize,
    layer_norm_eps: f64,
    #[serde(default)]
    position_embedding_type: Option<String>,
    #[serde(default)]
    model_type: Option<String>,
}

/// The encoder: embeddings and the layers.
pub(crate) struct Bert {
    words: Embedding,
    positions: Embedding,
    segments: Embedding,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
}

/// One encoder block.
struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    expand: Linear,
    contract: Linear,
    output_norm: LayerNorm,
    heads: usize,
    activation: Activation,
}

impl Bert {
    /// The encoder of `config` with the weights of `vb`.
    pub(crate) fn load(vb: VarBuilder<'_>, config: &Config) -> Result<Self> {
        if let Some(kind) = config
            .position_embedding_type
            .as_deref()
            .filter(|k| *k != "absolute")
        {
            candle_core::bail!("position_embedding_type {kind:?} is not supported (only absolute)");
        }
        if config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
        {
            candle_core::bail!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size,
                config.num_attention_heads
            );
        }
        let root = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            match config.model_type.as_deref() {
                Some(kind)
                    if vb.contains_tensor(&format!("{kind}.embeddings.word_embeddings.weight")) =>
                {
                    vb.pp(kind)
                }
                _ => vb,
            }
        };
        let e = root.pp("embeddings");
        let hidden = config.hidden_size;
        let layers = (0..config.num_hidden_layers)
            .map(|i| Layer::load(root.pp(format!("encoder.layer.{i}")), config))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            words: embedding(config.vocab_size, hidden, e.pp("word_embeddings"))?,
            positions: embedding(
                config.max_position_embeddings,
                hidden,
                e.pp("position_embeddings"),
            )?,
            segments: embedding(
                config.type_vocab_size,
                hidden,
                e.pp("token_type_embeddings"),
            )?,
            embedding_norm: layer_norm(hidden, config.layer_norm_eps, e.pp("LayerNorm"))?,
            layers,
        })
    }

    /// The last hidden states, `(rows, tokens, hidden)`, of `ids` `(rows, tokens)` with
    /// segment `segments` and `mask` (1 for a real token, 0 for padding).
    pub(crate) fn forward(&self, ids: &Tensor, segments: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (_, tokens) = ids.dims2()?;
        let positions: Vec<u32> = (0..u32::try_from(tokens).unwrap_or(u32::MAX)).collect();
        let positions = Tensor::new(positions.as_slice(), ids.device())?;
        let summed = (self.words.forward(ids)? + self.segments.forward(segments)?)?
            .broadcast_add(&self.positions.forward(&positions)?)?;
        let mut states = self.embedding_norm.forward(&summed)?;
        let bias = padding_bias(mask, states.dtype())?;
        for layer in &self.layers {
            states = layer.forward(&states, &bias)?;
        }
        Ok(states)
    }
}

/// The additive attention bias of `mask` `(rows, tokens)`: 0 where a token may be attended
/// to, the lowest finite value where it is padding; shaped `(rows, 1, 1, tokens)`.
fn padding_bias(mask: &Tensor, dtype: DType) -> Result<Tensor> {
    let mask = mask.unsqueeze(1)?.unsqueeze(1)?.to_dtype(dtype)?;
    let lowest = Tensor::new(f32::MIN, mask.device())?.to_dtype(dtype)?;
    (mask.ones_like()? - &mask)?.broadcast_mul(&lowest)
}

impl Layer {
    fn load(vb: VarBuilder<'_>, config: &Config) -> Result<Self> {
        let (hidden, inner, eps) = (
            config.hidden_size,
            config.intermediate_size,
            config.layer_norm_eps,
        );
        let attention = vb.pp("attention");
        let heads = attention.pp("self");
        Ok(Self {
            query: linear(hidden, hidden, heads.pp("query"))?,
            key: linear(hidden, hidden, heads.pp("key"))?,
            value: linear(hidden, hidden, heads.pp("value"))?,
            attention_out: linear(hidden, hidden, attention.pp("output").pp("dense"))?,
            attention_norm: layer_norm(hidden, eps, attention.pp("output").pp("LayerNorm"))?,
            expand: linear(hidden, inner, vb.pp("intermediate").pp("dense"))?,
            contract: linear(inner, hidden, vb.pp("output").pp("dense"))?,
            output_norm: layer_norm(hidden, eps, vb.pp("output").pp("LayerNorm"))?,
            heads: config.num_attention_heads,
            activation: config.hidden_act,
        })
    }

    fn forward(&self, states: &Tensor, bias: &Tensor) -> Result<Tensor> {
        let attended = self.attend(states, bias)?;
        let attended = self
            .attention_norm
            .forward(&(self.attention_out.forward(&attended)? + states)?)?;
        let expanded = self.expand.forward(&attended)?;
        let activated = match self.activation {
            Activation::Gelu => expanded.gelu_erf()?,
            Activation::GeluApproximate => expanded.gelu()?,
            Activation::Relu => expanded.relu()?,
        };
        self.output_norm
            .forward(&(self.contract.forward(&activated)? + attended)?)
    }

    /// Scaled dot-product attention over the heads, the heads joined again.
    fn attend(&self, states: &Tensor, bias: &Tensor) -> Result<Tensor> {
        let (rows, tokens, hidden) = states.dims3()?;
        let size = hidden / self.heads;
        let split = |t: Tensor| {
            t.reshape((rows, tokens, self.heads, size))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = split(self.query.forward(states)?)?;
        let k = split(self.key.forward(states)?)?;
        let v = split(self.value.forward(states)?)?;
        #[allow(
            clippy::cast_precision_loss,
            reason = "a head size is a few hundred at most"
        )]
        let scale = (size as f64).sqrt();
        let scores = (q.matmul(&k.t()?)? / scale)?.broadcast_add(bias)?;
        let weights = candle_nn::ops::softmax(&scores, D::Minus1)?;
        weights
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .flatten_from(D::Minus2)
    }
}
