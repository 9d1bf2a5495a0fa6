//! Running one test of the current test binary again, in a child process, for tests that
//! compare what two processes produce. Included by `#[path]`, as `fixtures.rs` is.
#![allow(dead_code, reason = "each crate's tests use some of these")]

const BEGIN: &str = "<<<chef-child-output>>>";
const END: &str = "<<<end-chef-child-output>>>";

/// In the child [`child_output`] starts (`env` is set), prints `text` for the parent;
/// elsewhere does nothing.
pub(crate) fn print_for_parent(env: &str, text: &str) {
    if std::env::var_os(env).is_some() {
        println!("{BEGIN}{text}{END}");
    }
}

/// Asserts that a child process succeeded; its stderr is the failure message.
#[track_caller]
pub(crate) fn assert_succeeded(output: &std::process::Output) {
    assert!(
        output.status.success(),
        "{output:?}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs the test `test` (its path in this binary, `module::name`; an ignored one too)
/// alone in a child process with `env` set, and returns what it printed with
/// [`print_for_parent`]. The child must succeed.
pub(crate) fn child_output(test: &str, env: &str) -> String {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            test,
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(env, "1")
        .output()
        .unwrap();
    assert_succeeded(&output);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let start = stdout.find(BEGIN).expect("the child printed its output") + BEGIN.len();
    let end = stdout.find(END).unwrap();
    stdout[start..end].to_owned()
}
