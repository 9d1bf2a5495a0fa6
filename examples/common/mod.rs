//! What the examples share: their error type, the check that stops a run, printing the log a
//! run returns, and reading that log in a test. Each example includes it with `mod common;`.

// Each example uses only a part of this module.
#![allow(dead_code, unused_macros)]

/// An example's error: whatever failed, boxed.
pub(crate) type Error = Box<dyn std::error::Error>;

/// Stops the run with `what` unless `condition` holds.
pub(crate) fn ensure(condition: bool, what: impl Into<String>) -> Result<(), Error> {
    if condition {
        Ok(())
    } else {
        Err(what.into().into())
    }
}

/// Prints a run's log, a line each.
pub(crate) fn print_log(log: &[String]) {
    for line in log {
        println!("{line}");
    }
}

/// The log joined by newlines, after asserting that it contains each of `expected`.
#[cfg(test)]
pub(crate) fn assert_log_contains(log: &[String], expected: &[&str]) -> String {
    let text = log.join("\n");
    for want in expected {
        assert!(text.contains(want), "{want:?} is missing from:\n{text}");
    }
    text
}

/// The test of an example whose log says it all: runs the example and asserts that its log
/// contains each of the given texts. An example that uses it includes this module with
/// `#[macro_use]`.
macro_rules! log_test {
    ($name:ident, [$($want:expr),+ $(,)?]) => {
        #[cfg(test)]
        mod tests {
            #[test]
            fn $name() {
                $crate::common::assert_log_contains(&super::run().unwrap(), &[$($want),+]);
            }
        }
    };
}
