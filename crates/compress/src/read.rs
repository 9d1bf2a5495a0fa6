//! Reading a model's call back: [`Compressed`]'s public API for it, which asks the level's
//! codec ([`crate::levels`]) and ends, for a call, in the shared validation of
//! [`crate::resolve`].

use chef_ir::{Target, WireNames};
use serde_json::Value;

use crate::{
    compress::{Compressed, EncodedCall},
    error::CodeError,
    levels::codec,
    resolve::{Resolution, real_name_of_wire},
};

impl Compressed {
    /// Translates a model's call (`name`, `args`) back to a real tool call, a lookup
    /// answer, or an error for the model.
    ///
    /// `args` may be an object or a string holding one (OpenAI sends argument text).
    pub fn resolve(&self, name: &str, args: &Value) -> Resolution {
        self.resolve_hiding(name, args, &|_| false)
    }

    /// [`resolve`](Self::resolve) whose did-you-mean never names a tool for which
    /// `hidden(real name)` is true: the suggestion of an
    /// [`UnknownCode`](crate::ResolveError::UnknownCode) or
    /// [`UnknownFunction`](crate::ResolveError::UnknownFunction) error is then the nearest tool
    /// that is not hidden, or none. A runtime passes its blocklist here, so a misspelt
    /// blocked tool is never answered with its exact spelling (or its code). Nothing else
    /// changes: a call that reaches a hidden tool resolves to it (gate it afterwards).
    ///
    /// ```
    /// use chef_compress::{compress, Level, Options, Resolution, ResolveError};
    /// use chef_ir::ToolDefinition;
    /// use serde_json::json;
    ///
    /// let tools = ["gdrive_upload_file", "gdrive_list_files"]
    ///     .map(|n| ToolDefinition::new(n, json!({"type": "object"})));
    /// let map = [("gdrive_upload_file", "def gdrive_upload_file(): \"Upload.\""),
    ///            ("gdrive_list_files", "def gdrive_list_files(): \"List.\"")];
    /// let options = Options::new()
    ///     .with_level(Level::Four)
    ///     .with_compiled(map.map(|(k, v)| (k.to_owned(), v.to_owned())));
    /// let c = compress(&tools, &options)?;
    /// let call = json!({"f": "gdrive_upload_files"});
    /// let Resolution::Error(e) = c.resolve("t", &call) else { panic!() };
    /// assert!(e.message().contains("Did you mean \"gdrive_upload_file\"?"));
    /// let Resolution::Error(e) = c.resolve_hiding("t", &call, &|n| n == "gdrive_upload_file") else {
    ///     panic!()
    /// };
    /// assert!(!e.message().contains("gdrive_upload_file\""), "{e}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resolve_hiding(
        &self,
        name: &str,
        args: &Value,
        hidden: &dyn Fn(&str) -> bool,
    ) -> Resolution {
        codec(self.level).resolve(self, name, args, hidden)
    }

    /// [`resolve`](Self::resolve) for a call that may use the names a target put on the
    /// wire: `names` is that target's table ([`wire_names`](Self::wire_names), or the
    /// `names` of the payload the model answered), and a name it renamed
    /// (`timezone_convert` for `timezone.convert` under OpenAI's rule) is resolved as the
    /// real name it stands for. Any other name is resolved as it is.
    ///
    /// A wire name that, as written, also reaches another tool of this set (its exact
    /// name, or at levels 3–4 a code or a name with other case or separators) is refused
    /// with [`ResolveError::AmbiguousWireName`](crate::ResolveError::AmbiguousWireName),
    /// naming both tools: nothing is guessed.
    ///
    /// At levels 3–4 the real names are not on the wire (only `t` and `q`), so a table
    /// made from this set changes nothing; a sanitised real name is still accepted there as
    /// separator drift, as [`resolve`](Self::resolve) does.
    ///
    /// ```
    /// use chef_compress::{compress, Options, Resolution};
    /// use chef_ir::{Target, ToolDefinition};
    /// use serde_json::json;
    ///
    /// let tools = [ToolDefinition::new("timezone.convert", json!({"type": "object"}))];
    /// let c = compress(&tools, &Options::new())?; // level 1: real names on the wire
    /// let names = c.wire_names(Target::OpenAiChat);
    /// assert_eq!(names.to_wire("timezone.convert"), "timezone_convert");
    /// assert!(matches!(c.resolve("timezone_convert", &json!({})), Resolution::Error(_)));
    /// let Resolution::Call { name, .. } = c.resolve_wire("timezone_convert", &json!({}), &names) else {
    ///     panic!()
    /// };
    /// assert_eq!(name, "timezone.convert");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resolve_wire(&self, name: &str, args: &Value, names: &WireNames) -> Resolution {
        match real_name_of_wire(name, names, || self.tool_for_name(name)) {
            Ok(real) => self.resolve(real, args),
            Err(e) => Resolution::Error(e),
        }
    }

    /// The name table `target`'s provider crate builds for this set's wire tools
    /// ([`tools`](Self::tools)): the same table the provider's `envelope` and `compile`
    /// use (and `chef compress --target` reports), for [`resolve_wire`](Self::resolve_wire).
    pub fn wire_names(&self, target: Target) -> WireNames {
        WireNames::new(self.tools.iter().map(|t| &t.name), target.name_rule())
    }

    /// The real tool that `written`, used as the tool name of a call, reaches in this set:
    /// at levels 0–1 the tool of exactly that name; at levels 3–4 the tool of that code or
    /// real name (with case and separator drift, as [`resolve`](Self::resolve) accepts
    /// it), never the dispatcher `t` or `q` itself. `None` at level 2, where a call names
    /// a namespace, and for a name that reaches no tool.
    pub fn tool_for_name(&self, written: &str) -> Option<&str> {
        codec(self.level)
            .tool_for_name(self, written)
            .map(|e| e.name.as_str())
    }

    /// Builds the raw call a model would emit to invoke `name` with `args`: `name(args)` at
    /// levels 0–1, `alias(op, args)` at level 2, `t(f=code, a=args)` at 3 and
    /// `t(f=name, a=args)` at 4 (whose map declares function names, never codes).
    /// [`resolve`](Self::resolve) of the result gives back `Call { name, args }`. A host that
    /// replays history written with real names encodes each earlier call with it; tests
    /// and demos use it to play the model.
    ///
    /// # Errors
    /// [`CodeError::UnknownTool`] for a name not in this compression.
    pub fn encode_call(&self, name: &str, args: Value) -> Result<EncodedCall, CodeError> {
        let entry = self
            .entry_by_name(name)
            .ok_or_else(|| CodeError::UnknownTool {
                name: name.to_owned(),
            })?;
        Ok(codec(self.level).encode_call(self, entry, args))
    }
}
