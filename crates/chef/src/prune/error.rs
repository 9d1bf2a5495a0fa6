use chef_ir::ToolName;

/// Why a registration was refused. The registry is left unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Two flat tools share a name.
    #[error("tool \"{name}\" is registered twice")]
    DuplicateTool {
        /// The shared name.
        name: ToolName,
    },
    /// Two groups (namespaces or toolkits) share a name.
    #[error(
        "{kind} \"{name}\" is registered twice (group names must be unique across namespaces and toolkits)"
    )]
    DuplicateGroup {
        /// `namespace` or `toolkit`.
        kind: &'static str,
        /// The shared name.
        name: String,
    },
    /// A group lists the same tool twice.
    #[error("{kind} \"{group}\" lists tool \"{tool}\" twice")]
    DuplicateMember {
        /// `namespace` or `toolkit`.
        kind: &'static str,
        /// The group.
        group: String,
        /// The repeated tool name.
        tool: ToolName,
    },
    /// A group member is itself a group: groups are one level deep.
    #[error(
        "{kind} \"{group}\" contains \"{tool}\", which is itself a namespace or toolkit; groups are one level deep"
    )]
    NestedGroup {
        /// `namespace` or `toolkit`.
        kind: &'static str,
        /// The outer group.
        group: String,
        /// The member named like a group.
        tool: ToolName,
    },
    /// A group or member uses a name the library reserves (`load_toolkit`, owned tools).
    #[error("{kind} \"{group}\" uses the reserved name \"{name}\"")]
    ReservedName {
        /// `namespace` or `toolkit`.
        kind: &'static str,
        /// The group.
        group: String,
        /// The reserved name.
        name: String,
    },
}
