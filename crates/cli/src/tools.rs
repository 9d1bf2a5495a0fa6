//! Reading a tool file into neutral definitions, with errors that name the file.

use std::path::Path;

use chef_ir::ToolDefinition;

use crate::error::CliError;

/// Loads the tools of `path` (any shape `chef_ir::load_tools` understands).
pub(crate) fn load(path: &Path) -> Result<Vec<ToolDefinition>, CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Read {
        path: path.to_owned(),
        source,
    })?;
    chef_ir::load_tools_from_str(&text)
        .map(|loaded| loaded.tools)
        .map_err(|source| CliError::Tools {
            path: path.to_owned(),
            source,
        })
}
