//! The output guardrail and the assistant prefill.

use super::{Chef, Layers, LayersMut, with_instruction};

impl Chef {
    /// Checks the model's answer against the guardrail in force (`None` without one). With
    /// a prefill, pass the reply with the prefill in front (the provider returns only what
    /// follows it).
    pub fn check_reply(&self, reply: &str) -> Option<crate::guardrail::Verdict> {
        self.layers().guardrail().map(|g| g.check(reply))
    }
}

impl<'a> Layers<'a> {
    /// The output guardrail in force.
    pub fn guardrail(&self) -> Option<&'a crate::guardrail::Guardrail> {
        self.chef.context.guardrail.as_ref().map(|(g, _)| g)
    }

    /// The prefill in force.
    pub fn prefill(&self) -> Option<&'a str> {
        self.chef.context.prefill.as_deref()
    }
}

impl LayersMut<'_> {
    /// Sets the output guardrail (replacing any), or clears it with `None`.
    ///
    /// Its [`instruction`](crate::guardrail::Guardrail::instruction) is the last message of
    /// every request from now on (a positional system message, before trailing assistant
    /// messages; each target places it as its API allows), after the cached prefix, so the
    /// cache holds. Snapshots and the journal carry it. Check the model's answer with
    /// [`check_reply`](Chef::check_reply).
    ///
    /// ```
    /// use chef::{Chef, ChefConfig, guardrail::{Guardrail, Verdict}};
    /// use chef_ir::{Message, Target};
    ///
    /// let mut chef = Chef::new(ChefConfig::default());
    /// chef.layers_mut().set_guardrail(Some(Guardrail::tag("answer")?)).set_prefill(Some("<answer>"));
    /// chef.push(Message::user("2 + 2?"));
    /// let body = String::from_utf8(chef.compile(Target::Anthropic)?.body)?;
    /// assert!(body.contains("inside <answer> and </answer>"));
    /// assert!(body.contains(r#"{"role":"assistant","content":[{"type":"text","text":"<answer>"}]}"#));
    /// assert!(matches!(chef.check_reply("<answer>4</answer>"), Some(Verdict::Pass { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_guardrail(&mut self, guardrail: Option<crate::guardrail::Guardrail>) -> &mut Self {
        self.chef.context.guardrail = guardrail.map(with_instruction);
        self
    }

    /// Sets the text the model's reply must start with (replacing any), or clears it with
    /// `None`. Anthropic gets it natively (a trailing assistant message); OpenAI Chat,
    /// OpenAI Responses and Gemini, which cannot start a reply with given text, get the
    /// provider crate's instruction after the last message instead, and the payload's
    /// notices say so. Snapshots and the journal carry it.
    pub fn set_prefill(&mut self, prefill: Option<impl Into<String>>) -> &mut Self {
        self.chef.context.prefill = prefill.map(Into::into);
        self
    }
}
