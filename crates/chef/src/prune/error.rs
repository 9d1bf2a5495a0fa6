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
    /// A group's name is empty or blank: nothing on the wire could name it.
    #[error("a {kind} needs a name: \"{name}\" is empty or blank")]
    EmptyGroupName {
        /// `namespace` or `toolkit`.
        kind: &'static str,
        /// The name as given.
        name: String,
    },
    /// A group lists a tool whose name is empty or blank.
    #[error("{kind} \"{group}\" lists a tool without a name")]
    EmptyMemberName {
        /// `namespace` or `toolkit`.
        kind: &'static str,
        /// The group.
        group: String,
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
    /// A flat tool uses a name chef answers itself (`context`, `create_memory`,
    /// `modify_memory`, `new_context`, `recall_context`, `load_toolkit`), or at levels 3–4
    /// a name the dispatcher owns on the wire (`t`, `q`) for a tool that would be sent
    /// beside it. Two tools of one name on the wire are refused by every provider, and the
    /// call could not be routed to both.
    #[error(
        "tool \"{name}\" uses a name chef reserves for {owner}; register it under another name"
    )]
    ReservedToolName {
        /// The tool's name.
        name: ToolName,
        /// What chef uses the name for.
        owner: &'static str,
    },
    /// A flat tool's name is empty or blank: no call could name it.
    #[error("the flat tool at index {index} has no name (it is empty or blank)")]
    BlankToolName {
        /// Zero-based index in the registered list.
        index: usize,
    },
    /// A tool's name, or one of its parameters' names, holds a control character (a line
    /// break, a tab): the lists a model reads show these names one per line
    /// ([`chef_compress::check_names`]).
    #[error(
        "tool {}: {} holds a line break, a control character or an invisible formatting character, which names may not hold",
        chef_compress::similarity::shown_name(name.as_str()),
        match parameter {
            Some(p) => format!("the name of its parameter {}", chef_compress::similarity::shown_name(p)),
            None => "its name".to_owned(),
        }
    )]
    ControlCharacter {
        /// The tool's name.
        name: ToolName,
        /// The parameter whose name holds one, when it is a parameter's.
        parameter: Option<String>,
    },
    /// Two registrations would put the same name on the wire: a flat tool named like a
    /// namespace, or a toolkit member named like a flat tool or a namespace.
    #[error("\"{name}\" is both {first} and {second}; names on the wire must be unique")]
    NameClash {
        /// The shared name.
        name: String,
        /// What holds it already (`a flat tool`, `namespace "files"`, ...).
        first: String,
        /// What the refused registration adds (`toolkit "git"`, ...).
        second: String,
    },
}
