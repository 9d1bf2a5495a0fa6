use chef_ir::ToolName;

/// A namespace or toolkit call that cannot be resolved. `Display` is written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NamespaceError {
    /// No namespace has this name.
    #[error(
        "\"{name}\" is not a registered namespace. Available: {}",
        list(available)
    )]
    NotANamespace {
        /// The name called.
        name: String,
        /// The registered namespaces.
        available: Vec<String>,
    },
    /// The namespace has no such action.
    #[error(
        "Unknown action \"{action}\" in namespace \"{group}\". Available: {}",
        list(available)
    )]
    UnknownAction {
        /// The namespace.
        group: String,
        /// The action given (`""` when absent or not a string).
        action: String,
        /// The namespace's actions.
        available: Vec<ToolName>,
    },
    /// The arguments are not a usable object.
    #[error("Bad arguments for namespace \"{group}\": {problem}.")]
    BadArguments {
        /// The namespace.
        group: String,
        /// What is wrong.
        problem: String,
    },
    /// No toolkit has this name.
    #[error("Unknown toolkit: \"{name}\". Available: {}", list(available))]
    UnknownToolkit {
        /// The name asked for.
        name: String,
        /// The registered toolkits.
        available: Vec<String>,
    },
}

fn list<T: std::fmt::Display>(items: &[T]) -> String {
    if items.is_empty() {
        "(none)".to_owned()
    } else {
        items
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}
