//! Distilling a static model from MiniLM, model2vec's way: embed every token of the
//! vocabulary alone (`[CLS] token [SEP]`, mean-pooled), reduce the vectors to 256
//! dimensions with PCA, and scale each token's row down by its estimated frequency (Zipf's
//! law on vocabulary rank, SIF weighting), so that frequent sub-words weigh less in a mean.
//!
//! The output directory is a model2vec model: `model.safetensors` (one `embeddings`
//! matrix, f32, one row per token), `tokenizer.json` (the source tokenizer, with padding
//! and truncation removed), `config.json`, and a `NOTICE` naming the source model.

use std::{path::Path, time::Instant};

use serde_json::{Value, json};

use crate::{
    error::{Error, Result},
    minilm::{MiniLm, bad, read, required},
};
use chef_compress::search::dense::Embedder;

/// Settings for [`distill`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DistillOptions {
    /// Output dimensions (PCA components); at or above the source's, PCA is skipped.
    pub dims: usize,
    /// The SIF coefficient `a` of the weight `a / (a + p(token))` (model2vec's default
    /// 1e-4); 0 or less switches weighting off.
    pub sif: f64,
    /// Tokens per forward pass.
    pub batch: usize,
}

impl Default for DistillOptions {
    fn default() -> Self {
        Self {
            dims: 256,
            sif: 1e-4,
            batch: 512,
        }
    }
}

/// What [`distill`] made.
#[derive(Debug, Clone, PartialEq)]
pub struct DistillReport {
    /// Rows (tokens).
    pub vocab: usize,
    /// Columns (dimensions).
    pub dims: usize,
    /// Share of the token vectors' variance the kept components explain (1 without PCA).
    pub explained_variance: f64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Makes a static model in `out` from the MiniLM directory `from` (see the module docs).
/// `progress` is called with (tokens embedded, vocabulary size) after every batch.
pub fn distill(
    from: &Path,
    out: &Path,
    options: &DistillOptions,
    mut progress: impl FnMut(usize, usize),
) -> Result<DistillReport> {
    let started = Instant::now();
    let model = MiniLm::load(from)?;
    let tokenizer_path = required(from, "tokenizer.json")?;
    let tokenizer = model.tokenizer();
    let vocab = tokenizer.get_vocab_size(true);
    let special = |token: &str| {
        tokenizer
            .token_to_id(token)
            .ok_or_else(|| bad(&tokenizer_path, format!("no {token} token")))
    };
    let (cls, sep) = (special("[CLS]")?, special("[SEP]")?);

    // 1. Every token alone through the model.
    let mut rows: Vec<Vec<f32>> = Vec::with_capacity(vocab);
    let ids: Vec<u32> = (0..u32::try_from(vocab).unwrap_or(u32::MAX)).collect();
    for chunk in ids.chunks(options.batch.max(1)) {
        let mut batch = Vec::with_capacity(chunk.len() * 3);
        for &id in chunk {
            batch.extend([cls, id, sep]);
        }
        let mask = vec![1; batch.len()];
        let pooled = model
            .pool(batch, mask, chunk.len())
            .map_err(|e| bad(from, e))?;
        rows.extend(pooled);
        progress(rows.len(), vocab);
    }
    let source_dims = rows.first().map_or(0, Vec::len);

    // 2. PCA.
    let (mut reduced, explained_variance) = pca(&rows, options.dims);
    let dims = reduced.first().map_or(0, Vec::len);

    // 3. Zipf (SIF) weighting by vocabulary rank.
    if options.sif > 0.0 {
        let harmonic: f64 = (0..vocab).map(|r| 1.0 / (r as f64 + 2.0)).sum();
        for (rank, row) in reduced.iter_mut().enumerate() {
            let p = 1.0 / (rank as f64 + 2.0) / harmonic;
            let w = (options.sif / (options.sif + p)) as f32;
            row.iter_mut().for_each(|x| *x *= w);
        }
    }

    // 4. Write the model.
    std::fs::create_dir_all(out).map_err(|source| Error::Io {
        path: out.to_owned(),
        source,
    })?;
    let write = |name: &str, bytes: &[u8]| {
        let path = out.join(name);
        std::fs::write(&path, bytes).map_err(|source| Error::Io { path, source })
    };
    write(
        "model.safetensors",
        &safetensors_f32("embeddings", &reduced, dims),
    )?;
    let mut tokenizer_json: Value =
        serde_json::from_slice(&read(&tokenizer_path)?).map_err(|e| bad(&tokenizer_path, e))?;
    if let Some(map) = tokenizer_json.as_object_mut() {
        map.insert("padding".into(), Value::Null);
        map.insert("truncation".into(), Value::Null);
    }
    write(
        "tokenizer.json",
        &serde_json::to_vec(&tokenizer_json).map_err(|e| bad(&tokenizer_path, e))?,
    )?;
    let config = json!({
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "hidden_dim": dims,
        "normalize": true,
        "apply_pca": options.dims,
        "apply_zipf": options.sif > 0.0,
        "sif_coefficient": options.sif,
        "source_model": model.model_id(),
        "source_dims": source_dims,
        "distilled_by": "chef embed distill",
    });
    write(
        "config.json",
        &serde_json::to_vec_pretty(&config).map_err(|e| bad(out, e))?,
    )?;
    let notice = format!(
        "A static embedding model distilled by `chef embed distill` (model2vec's method: \
         vocabulary embedding, PCA to {dims}, Zipf/SIF weighting) from the sentence-embedding \
         model in {} (fingerprint {}).\nWhen the source is sentence-transformers/all-MiniLM-L6-v2 \
         (https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2), its license is \
         Apache-2.0 and this derived model is distributed under the same terms; see LICENSE.\n",
        from.display(),
        model.model_id()
    );
    write("NOTICE", notice.as_bytes())?;
    if let Ok(license) = std::fs::read(from.join("LICENSE")) {
        write("LICENSE", &license)?;
    }
    Ok(DistillReport {
        vocab: reduced.len(),
        dims,
        explained_variance,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// A safetensors file holding one f32 matrix named `name`.
fn safetensors_f32(name: &str, rows: &[Vec<f32>], dims: usize) -> Vec<u8> {
    let bytes = rows.len() * dims * 4;
    let header = json!({
        name: {"dtype": "F32", "shape": [rows.len(), dims], "data_offsets": [0, bytes]},
        "__metadata__": {"format": "pt"},
    });
    let mut header = header.to_string().into_bytes();
    while !header.len().is_multiple_of(8) {
        header.push(b' ');
    }
    let mut out = Vec::with_capacity(8 + header.len() + bytes);
    out.extend_from_slice(&(header.len() as u64).to_le_bytes());
    out.extend_from_slice(&header);
    for row in rows {
        for x in row {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    out
}

/// Centres `rows` and projects them on their first `dims` principal components (no
/// projection when `dims` is at least their width). Returns the rows and the share of
/// variance kept.
pub(crate) fn pca(rows: &[Vec<f32>], dims: usize) -> (Vec<Vec<f32>>, f64) {
    let n = rows.first().map_or(0, Vec::len);
    if dims >= n || rows.len() < 2 {
        return (rows.to_vec(), 1.0);
    }
    let mut mean = vec![0.0_f64; n];
    for row in rows {
        for (m, &x) in mean.iter_mut().zip(row) {
            *m += f64::from(x);
        }
    }
    let count = rows.len() as f64;
    mean.iter_mut().for_each(|m| *m /= count);
    let mut cov = vec![0.0_f64; n * n];
    let mut centred = vec![0.0_f64; n];
    for row in rows {
        for ((c, &x), m) in centred.iter_mut().zip(row).zip(&mean) {
            *c = f64::from(x) - m;
        }
        for (i, &ci) in centred.iter().enumerate() {
            if let Some(line) = cov.get_mut(i * n..i * n + n) {
                for (cell, &cj) in line.iter_mut().zip(&centred) {
                    *cell += ci * cj;
                }
            }
        }
    }
    cov.iter_mut().for_each(|c| *c /= count - 1.0);
    let (values, vectors) = symmetric_eigen(cov, n);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        let value = |i: usize| values.get(i).copied().unwrap_or(0.0);
        value(b).total_cmp(&value(a))
    });
    let total: f64 = values.iter().sum();
    let kept: f64 = order.iter().take(dims).filter_map(|&i| values.get(i)).sum();
    let components: Vec<Vec<f64>> = order
        .iter()
        .take(dims)
        .map(|&k| {
            let component: Vec<f64> = (0..n)
                .map(|i| vectors.get(i * n + k).copied().unwrap_or(0.0))
                .collect();
            with_canonical_sign(component)
        })
        .collect();
    let projected = rows
        .iter()
        .map(|row| {
            components
                .iter()
                .map(|comp| {
                    row.iter()
                        .zip(&mean)
                        .zip(comp)
                        .map(|((&x, m), c)| (f64::from(x) - m) * c)
                        .sum::<f64>() as f32
                })
                .collect()
        })
        .collect();
    (projected, if total > 0.0 { kept / total } else { 1.0 })
}

/// `component` or its negation, whichever has its largest entry (by magnitude, the first
/// of equals) positive. A principal component is defined only up to its sign, and which
/// sign the Jacobi rotations end on depends on the last bits of the covariance: on a CPU
/// whose SIMD kernels sum the token vectors in another order, about half the components
/// came out negated. With this rule the same model distils to the same vectors anywhere
/// (up to rounding).
fn with_canonical_sign(mut component: Vec<f64>) -> Vec<f64> {
    let largest =
        component.iter().copied().fold(
            0.0_f64,
            |best, x| if x.abs() > best.abs() { x } else { best },
        );
    if largest < 0.0 {
        component.iter_mut().for_each(|x| *x = -*x);
    }
    component
}

/// Eigenvalues and eigenvectors (column `k` of the row-major `n × n` result) of the
/// symmetric matrix `a`, by cyclic Jacobi rotations.
#[allow(
    clippy::indexing_slicing,
    reason = "every index is below n * n, the length of both matrices, checked on entry"
)]
pub(crate) fn symmetric_eigen(mut a: Vec<f64>, n: usize) -> (Vec<f64>, Vec<f64>) {
    if a.len() != n * n {
        return (Vec::new(), Vec::new());
    }
    let mut v = vec![0.0_f64; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    let scale: f64 = a.iter().map(|x| x * x).sum();
    for _sweep in 0..64 {
        let mut off = 0.0;
        for p in 0..n {
            for q in p + 1..n {
                off += a[p * n + q] * a[p * n + q];
            }
        }
        if off <= 1e-24 * scale || off == 0.0 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq.abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (akp, akq) = (a[k * n + p], a[k * n + q]);
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (a[p * n + k], a[q * n + k]);
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                for k in 0..n {
                    let (vkp, vkq) = (v[k * n + p], v[k * n + q]);
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    let values = (0..n).map(|i| a[i * n + i]).collect();
    (values, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jacobi_diagonalises_a_symmetric_matrix() {
        let n = 4;
        let a = vec![
            4.0, 1.0, -2.0, 2.0, //
            1.0, 2.0, 0.0, 1.0, //
            -2.0, 0.0, 3.0, -2.0, //
            2.0, 1.0, -2.0, -1.0,
        ];
        let (values, vectors) = symmetric_eigen(a.clone(), n);
        for k in 0..n {
            for i in 0..n {
                let av: f64 = (0..n).map(|j| a[i * n + j] * vectors[j * n + k]).sum();
                assert!((av - values[k] * vectors[i * n + k]).abs() < 1e-9);
            }
        }
        let trace: f64 = values.iter().sum();
        assert!((trace - 8.0).abs() < 1e-9);
    }

    #[test]
    fn a_component_s_sign_does_not_depend_on_how_the_solver_ended() {
        let component = vec![0.1, -0.9, 0.3];
        let flipped: Vec<f64> = component.iter().map(|x| -x).collect();
        assert_eq!(
            with_canonical_sign(component.clone()),
            vec![-0.1, 0.9, -0.3]
        );
        assert_eq!(with_canonical_sign(flipped), vec![-0.1, 0.9, -0.3]);
        assert_eq!(with_canonical_sign(vec![0.0, 0.0]), vec![0.0, 0.0]);
    }

    #[test]
    fn pca_keeps_the_direction_of_most_variance() {
        // Points on the line y = 2x plus a little noise in z.
        let rows: Vec<Vec<f32>> = (0..50)
            .map(|i| {
                let x = i as f32 / 10.0;
                vec![x, 2.0 * x, if i % 2 == 0 { 0.01 } else { -0.01 }]
            })
            .collect();
        let (reduced, kept) = pca(&rows, 1);
        assert_eq!(reduced[0].len(), 1);
        assert!(kept > 0.999, "{kept}");
        // Projections are spaced like the points along the line (up to sign).
        let step = (reduced[1][0] - reduced[0][0]).abs();
        assert!((step - (0.1_f32 * 5.0_f32.sqrt())).abs() < 1e-3, "{step}");
        let (same, all) = pca(&rows, 3);
        assert_eq!((same, all), (rows, 1.0));
    }

    #[test]
    fn safetensors_header_is_aligned_and_names_the_matrix() {
        let bytes = safetensors_f32("embeddings", &[vec![1.0, 2.0], vec![3.0, 4.0]], 2);
        let len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        assert_eq!(len % 8, 0);
        let header: Value = serde_json::from_slice(&bytes[8..8 + len]).unwrap();
        assert_eq!(header["embeddings"]["shape"], json!([2, 2]));
        assert_eq!(bytes.len(), 8 + len + 16);
        assert_eq!(&bytes[8 + len..8 + len + 4], &1.0_f32.to_le_bytes());
    }
}
