//! The output of a compression ([`Compressed`]): its entries, namespaces and codes, each
//! tool's shared core, and finding a tool from what the model wrote (`lookup`). Building
//! one is `crate::pipeline`; reading a call back is `crate::read` and `crate::levels`.

mod code;
mod compressed;
mod core;
mod lookup;

pub use self::compressed::{Compressed, EncodedCall};
pub(crate) use self::{
    code::Code,
    compressed::{Entry, HOLE, Namespace},
    core::{SchemaSource, ToolCore},
    lookup::parse_code,
};
