//! Which paths the gateway passes through to the upstream unchanged, and which it refuses.
//!
//! Only the three API endpoints go through a chef session (the gate, the blocklist, the
//! schemas). Everything else under `/v1/` is passed through as it came — so a path that
//! is an API endpoint in disguise, or an endpoint that runs or returns a model's output by
//! another way, would let a blocked tool be offered or its call reach the client. Both are
//! refused before anything is sent:
//!
//! * a path that is not in canonical form: an empty segment (`//`, a trailing `/`), a `.`
//!   or `..` segment, a percent-encoded `.`, `/` or `\`, or a backslash. The upstream (or
//!   a proxy before it) may normalise it onto `/v1/chat/completions`; the gateway does
//!   not guess which, it refuses;
//! * an API endpoint's path in another letter case (`/v1/Chat/Completions`);
//! * the endpoints that run a model or hand back its stored output without the gateway
//!   seeing each reply: stored responses and chat completions (`/v1/responses/…`,
//!   `/v1/chat/completions/…`), batches (`/v1/batches`, `/v1/messages/batches`), the
//!   Assistants API (`/v1/assistants`, `/v1/threads`), conversations
//!   (`/v1/conversations`) and realtime sessions (`/v1/realtime`).
//!
//! Everything else (`/v1/models`, `/v1/messages/count_tokens`, `/v1/embeddings`,
//! `/v1/files`, …) passes through.

/// The API endpoints, below `/v1`.
const ENDPOINTS: [&str; 3] = ["/chat/completions", "/responses", "/messages"];

/// Endpoints (below `/v1`) that run a model or return its output past the gate: the path
/// itself or anything below it is refused.
const UNGATED: [&str; 8] = [
    "/responses",
    "/chat/completions",
    "/messages/batches",
    "/batches",
    "/assistants",
    "/threads",
    "/conversations",
    "/realtime",
];

/// Why `rest` (the path below `/v1`, e.g. `/models`) is not passed through, or `None` when
/// it is.
pub(crate) fn refusal(rest: &str) -> Option<String> {
    if !rest.is_empty() {
        let mut segments = rest.split('/');
        // `rest` starts with '/' (it follows `/v1`): the first piece is empty; a path such
        // as `/v1x` is not under `/v1/`.
        if segments.next() != Some("") {
            return Some(format!("/v1{rest} is not a path of this gateway"));
        }
        for segment in segments {
            let lower = segment.to_ascii_lowercase();
            let odd = segment.is_empty()
                || segment == "."
                || segment == ".."
                || segment.contains('\\')
                || ["%2e", "%2f", "%5c"].iter().any(|e| lower.contains(e));
            if odd {
                return Some(format!(
                    "/v1{rest} is not in canonical form (an empty, `.` or `..` segment, or an \
                     encoded `.`, `/` or `\\`): the gateway passes no such path through, since \
                     the upstream could read it as an API endpoint; send the path as it is \
                     meant"
                ));
            }
        }
    }
    let lower = rest.to_ascii_lowercase();
    if let Some(endpoint) = ENDPOINTS.iter().find(|e| lower == **e && rest != **e) {
        return Some(format!(
            "/v1{rest} is /v1{endpoint} in another letter case: send it as /v1{endpoint}"
        ));
    }
    let below = |prefix: &str| {
        lower == prefix
            || lower
                .strip_prefix(prefix)
                .is_some_and(|tail| tail.starts_with('/'))
    };
    if ENDPOINTS.contains(&rest) {
        return None;
    }
    UNGATED.iter().find(|p| below(p)).map(|p| {
        format!(
            "/v1{rest} is not passed through: /v1{p} runs a model or returns its stored \
             output without the gateway's gate (the blocklist, the tool schemas); send each \
             request to /v1/chat/completions, /v1/responses or /v1/messages"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::refusal;

    #[test]
    fn ordinary_paths_pass_through() {
        for rest in [
            "",
            "/models",
            "/models/gpt-4o",
            "/messages/count_tokens",
            "/embeddings",
            "/files",
            "/files/file-abc/content",
            "/completions",
        ] {
            assert_eq!(refusal(rest), None, "{rest}");
        }
    }

    #[test]
    fn disguised_endpoints_and_ungated_ones_are_refused() {
        for rest in [
            "/./chat/completions",
            "/%2e/chat/completions",
            "/%2E/messages",
            "/x/../chat/completions",
            "//chat/completions",
            "/chat//completions",
            "/chat/completions/",
            "/messages/",
            "/chat%2fcompletions",
            "/chat\\completions",
            "/Chat/Completions",
            "/RESPONSES",
            "/responses/resp_1",
            "/responses/resp_1/input_items",
            "/chat/completions/chatcmpl-1",
            "/messages/batches",
            "/messages/batches/msgbatch_1/results",
            "/batches",
            "/threads/t1/runs",
            "/assistants",
            "/conversations/c1/items",
            "/realtime/sessions",
            "x",
        ] {
            assert!(refusal(rest).is_some(), "{rest}");
        }
        assert!(refusal("/responses/resp_1").unwrap().contains("gate"));
        assert!(
            refusal("/./chat/completions")
                .unwrap()
                .contains("canonical")
        );
    }
}
