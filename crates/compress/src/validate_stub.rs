//! TEMPORARY stand-in for helper/validate's modules, so this branch compiles until it is
//! merged. Deleted at merge.
#![allow(missing_docs, unreachable_pub, clippy::all)]

pub mod similarity {
    pub fn similarity(a: &str, b: &str) -> u8 {
        let norm = |x: &str| -> String {
            x.to_lowercase()
                .chars()
                .filter(|c| !matches!(c, '_' | '-') && !c.is_whitespace())
                .collect()
        };
        if a.is_empty() || b.is_empty() {
            return 0;
        }
        let (na, nb) = (norm(a), norm(b));
        if na == nb {
            return 100;
        }
        let (s, l) = if na.len() <= nb.len() {
            (&na, &nb)
        } else {
            (&nb, &na)
        };
        if l.starts_with(s.as_str()) || l.ends_with(s.as_str()) {
            return 85;
        }
        if s.chars().count() >= 3 && l.contains(s.as_str()) {
            return 60;
        }
        0
    }
    pub fn nearest<'a>(
        name: &str,
        candidates: impl IntoIterator<Item = &'a str>,
        floor: u8,
    ) -> Option<&'a str> {
        let mut best: Option<(u8, &'a str)> = None;
        for c in candidates {
            let s = similarity(name, c);
            if best.map_or(true, |(b, _)| s > b) {
                best = Some((s, c));
            }
        }
        best.filter(|(s, _)| *s >= floor).map(|(_, c)| c)
    }
}

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Normalisation {
    pub tool: String,
    pub path: String,
    pub what: String,
}

#[derive(Debug, thiserror::Error)]
#[error("schema of {tool} unusable")]
pub struct SchemaError {
    pub tool: String,
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ArgumentError {
    pub tool: String,
    pub message: String,
}
impl ArgumentError {
    pub fn message(&self) -> String {
        self.message.clone()
    }
}

#[derive(Debug)]
pub struct ArgumentValidator {
    tool: String,
    schema: Value,
    params: Vec<String>,
    required: Vec<String>,
}
impl ArgumentValidator {
    pub fn new(tool: &str, schema: &Value) -> Result<Self, SchemaError> {
        let params = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        Ok(Self {
            tool: tool.to_owned(),
            schema: schema.clone(),
            params,
            required,
        })
    }
    pub fn validate(&self, args: &Value) -> Result<(), ArgumentError> {
        for r in &self.required {
            match args.get(r) {
                None | Some(Value::Null) => {
                    return Err(ArgumentError {
                        tool: self.tool.clone(),
                        message: format!(
                            "Missing required parameter \"{r}\" for {}. Required: {}.",
                            self.tool,
                            self.required.join(", ")
                        ),
                    });
                }
                Some(Value::String(s)) if s.is_empty() => {
                    return Err(ArgumentError {
                        tool: self.tool.clone(),
                        message: format!("Missing required parameter \"{r}\" for {}.", self.tool),
                    });
                }
                _ => {}
            }
        }
        if !self.params.is_empty() {
            if let Some(m) = args.as_object() {
                for k in m.keys() {
                    if !self.params.contains(k) {
                        return Err(ArgumentError {
                            tool: self.tool.clone(),
                            message: format!(
                                "Unknown parameter \"{k}\" for {}. Accepted: {}.",
                                self.tool,
                                self.params.join(", ")
                            ),
                        });
                    }
                }
            }
        }
        Ok(())
    }
    pub fn normalised_schema(&self) -> &Value {
        &self.schema
    }
    pub fn normalisations(&self) -> &[Normalisation] {
        &[]
    }
    pub fn parameters(&self) -> &[String] {
        &self.params
    }
    pub fn required(&self) -> &[String] {
        &self.required
    }
}
