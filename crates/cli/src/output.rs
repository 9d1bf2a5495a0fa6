//! Writing results to stdout without panicking on a closed pipe.

use std::{
    io::{self, Write},
    path::Path,
};

use serde::Serialize;

use crate::error::CliError;

/// Writes `value` as one line of compact JSON to stdout.
pub(crate) fn json_line<T: Serialize>(value: &T) -> Result<(), CliError> {
    report_json_line(value, &[])
}

/// Writes text to stdout as it is.
pub(crate) fn text(text: &str) -> Result<(), CliError> {
    report_text(text, &[])
}

/// [`json_line`], to stderr instead when one of `outputs` (the files the command wrote) is
/// stdout itself (`--out /dev/stdout > map.json`): that file then holds its output alone.
pub(crate) fn report_json_line<T: Serialize>(value: &T, outputs: &[&Path]) -> Result<(), CliError> {
    let mut line = serde_json::to_vec(value).map_err(|e| CliError::Write(e.into()))?;
    line.push(b'\n');
    emit(&line, outputs)
}

/// [`text`], to stderr instead when one of `outputs` is stdout itself (see
/// [`report_json_line`]).
pub(crate) fn report_text(text: &str, outputs: &[&Path]) -> Result<(), CliError> {
    emit(text.as_bytes(), outputs)
}

fn emit(bytes: &[u8], outputs: &[&Path]) -> Result<(), CliError> {
    let stream = if outputs.iter().any(|p| is_stdout(p)) {
        StandardStream::Stderr
    } else {
        StandardStream::Stdout
    };
    stream.write(bytes).map_err(|e| match e.kind() {
        io::ErrorKind::BrokenPipe => CliError::BrokenPipe,
        _ => CliError::Write(e),
    })
}

/// Writes `bytes` to a temporary file beside `path`, flushes it to disk and renames it
/// over `path`, so a reader finds the old bytes or the new ones, never a mix. The file gets
/// the permissions `path` had, or for a new file (on Unix) `rw-r--r--`, as an ordinary
/// file would: the temporary file is created owner-only.
///
/// A symbolic link at `path` is followed: the link stays and the file it points to gets
/// the new bytes, still atomically (the temporary file goes beside that file). An existing
/// `path` that is not a regular file (a FIFO, a character device such as `/dev/stdout`) is
/// written in place, not replaced, so it cannot be atomic. A directory is an error.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    write_atomic_as(path, bytes, false)
}

/// [`write_atomic`] for content that may be private (a session's conversation): a new file
/// stays owner-only (`rw-------` on Unix).
pub(crate) fn write_atomic_private(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    write_atomic_as(path, bytes, true)
}

/// Checks that `path` (given to `flag`) can be written: not a directory, in a directory
/// that exists and takes a new file. Done before any request, so a typo in the path does
/// not cost a run.
pub(crate) fn check_writable(flag: &str, path: &Path) -> Result<(), CliError> {
    if path.is_dir() {
        return Err(CliError::Usage(format!(
            "{flag} {}: is a directory; give a file path",
            path.display()
        )));
    }
    if is_stream(path) || through_descriptor(path).unwrap_or(false) {
        // A FIFO, a device or an open descriptor is written in place; nothing goes
        // beside it.
        return Ok(());
    }
    let target = follow_links(path)
        .map_err(|e| CliError::Usage(format!("{flag} {}: {e}", path.display())))?;
    let dir = parent_dir(&target);
    if !dir.is_dir() {
        return Err(CliError::Usage(format!(
            "{flag} {}: the directory {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    tempfile::NamedTempFile::new_in(dir).map_err(|e| {
        CliError::Usage(format!(
            "{flag} {}: cannot write in {}: {e}",
            path.display(),
            dir.display()
        ))
    })?;
    Ok(())
}

/// Whether `a` and `b` name the same file: the same device and inode when both exist,
/// otherwise the same path once symbolic links are followed and the directory made
/// canonical (so `X`, `./X` and a link to `X` are one file, existing or not).
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(a), Ok(b)) = (follow_links(a), follow_links(b)) else {
        return false;
    };
    #[cfg(unix)]
    if let (Ok(ma), Ok(mb)) = (std::fs::metadata(&a), std::fs::metadata(&b)) {
        use std::os::unix::fs::MetadataExt as _;
        return (ma.dev(), ma.ino()) == (mb.dev(), mb.ino());
    }
    let canonical = |p: &Path| {
        let dir = std::fs::canonicalize(parent_dir(p)).ok()?;
        Some(dir.join(p.file_name()?))
    };
    match (canonical(&a), canonical(&b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The directory a file `path` goes in (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn write_atomic_as(path: &Path, bytes: &[u8], private: bool) -> Result<(), CliError> {
    write_file_atomic(path, bytes, private).map_err(|source| CliError::WriteFile {
        path: path.to_path_buf(),
        source,
    })
}

/// [`write_atomic`] (or, `private`, [`write_atomic_private`]) with the I/O error as it is,
/// for a caller with an error type of its own; the error names no temporary file.
/// As [`write_atomic`], a symbolic link is followed and a FIFO or device written in place.
pub(crate) fn write_file_atomic(path: &Path, bytes: &[u8], private: bool) -> io::Result<()> {
    // tempfile names its own temporary path in its errors; the user named `path`.
    let err = without_temp_path;
    // Standard output or error itself (`--out /dev/stdout > map.json`): written through
    // this process's own handle, whose offset the later output shares. A rename would
    // replace the file the shell opened, and the shell's descriptor would go on writing
    // into the unlinked copy.
    if let Some(stream) = standard_stream(path) {
        return stream.write(bytes);
    }
    // Another open descriptor (`/dev/fd/3`, `/proc/self/fd/3`): the same holds, so it is
    // written in place.
    if through_descriptor(path)? {
        return write_in_place(path, bytes);
    }
    // The system follows the links here, also those `follow_links` cannot name (see
    // `in_place`); the permissions are the file's the links end at.
    let existing = match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory; give a file path",
            ));
        }
        Ok(meta) if !meta.is_file() => return write_in_place(path, bytes),
        Ok(meta) => Some(meta.permissions()),
        Err(_) => None,
    };
    let path = &follow_links(path)?;
    let mut tmp = tempfile::NamedTempFile::new_in(parent_dir(path)).map_err(err)?;
    tmp.write_all(bytes).map_err(err)?;
    match existing {
        Some(permissions) => tmp.as_file().set_permissions(permissions).map_err(err)?,
        None if !private => set_readable(tmp.as_file()).map_err(err)?,
        None => {}
    }
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    // The rename itself is durable once the directory is flushed.
    #[cfg(unix)]
    std::fs::File::open(parent_dir(path))
        .and_then(|dir| dir.sync_all())
        .map_err(err)?;
    Ok(())
}

/// Whether `path` ends (through any links, as the system follows them) at an existing
/// FIFO or device, which is written in place. Asked of the system, not of
/// [`follow_links`]: `/dev/stdout` on a pipe ends at `/proc/self/fd/1`, whose link text
/// (`pipe:[…]`) names no path.
pub(crate) fn in_place(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Whether `path` is the file standard output writes to (the same device and inode: a
/// pipe or terminal reached through `/dev/stdout`, or a file the shell redirected it to).
pub(crate) fn is_stdout(path: &Path) -> bool {
    standard_stream(path) == Some(StandardStream::Stdout)
}

/// Whether `path` is written once, whole, at the end rather than rewritten as a run goes
/// on: a FIFO or device, or standard output or error (even when the shell redirected it
/// to a regular file: each write there comes after the last, so a rewrite would repeat
/// the content).
pub(crate) fn is_stream(path: &Path) -> bool {
    in_place(path) || standard_stream(path).is_some()
}

/// This process's standard output or error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StandardStream {
    Stdout,
    Stderr,
}

impl StandardStream {
    fn write(self, bytes: &[u8]) -> io::Result<()> {
        fn flushed(mut out: impl Write, bytes: &[u8]) -> io::Result<()> {
            out.write_all(bytes)?;
            out.flush()
        }
        match self {
            Self::Stdout => flushed(io::stdout().lock(), bytes),
            Self::Stderr => flushed(io::stderr().lock(), bytes),
        }
    }
}

/// Which standard stream `path` is, if either: the same device and inode as what
/// `/dev/stdout` or `/dev/stderr` reach. A terminal both share counts as stdout.
#[cfg(unix)]
fn standard_stream(path: &Path) -> Option<StandardStream> {
    use std::os::unix::fs::MetadataExt;
    let target = std::fs::metadata(path).ok()?;
    let is = |stream: &str| {
        std::fs::metadata(stream).is_ok_and(|m| (m.dev(), m.ino()) == (target.dev(), target.ino()))
    };
    if is("/dev/stdout") {
        Some(StandardStream::Stdout)
    } else if is("/dev/stderr") {
        Some(StandardStream::Stderr)
    } else {
        None
    }
}

/// Which standard stream `path` is (not known off Unix).
#[cfg(not(unix))]
fn standard_stream(_path: &Path) -> Option<StandardStream> {
    None
}

/// Whether a link on the way from `path` to its file is an open descriptor's
/// (`/dev/fd/N`, `/dev/stdout`, `/proc/<pid>/fd/N`): the file is already open, so a
/// rename beside it would leave the descriptor on the old, unlinked copy.
fn through_descriptor(path: &Path) -> io::Result<bool> {
    Ok(link_chain(path)?.iter().any(|p| is_descriptor_path(p)))
}

/// `/dev/fd/N`, `/dev/stdin|stdout|stderr`, `/proc/<anything>/fd/N`.
fn is_descriptor_path(path: &Path) -> bool {
    use std::path::Component;
    let parts: Vec<_> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_string_lossy()),
            _ => None,
        })
        .collect();
    match parts.as_slice() {
        [dev, stream] if dev == "dev" => {
            matches!(stream.as_ref(), "stdin" | "stdout" | "stderr")
        }
        [dev, fd, _] if dev == "dev" && fd == "fd" => true,
        [proc, _, fd, _] if proc == "proc" && fd == "fd" => true,
        _ => false,
    }
}

/// Writes `bytes` in place at `path`: an existing FIFO or device, which a rename would
/// replace by a regular file, or a file reached through an open descriptor (cut to
/// `bytes`). Not atomic: a reader of a FIFO sees the bytes as they come.
fn write_in_place(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(regular)
        .open(path)?;
    file.write_all(bytes)?;
    file.flush()
}

/// Links followed before [`follow_links`] gives up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// The path `path` names once every symbolic link on it is followed, so that a rename
/// replaces the file the link points to and not the link. The file itself need not exist
/// (a dangling link names the file to create); a loop of links is an error.
fn follow_links(path: &Path) -> io::Result<std::path::PathBuf> {
    Ok(link_chain(path)?
        .pop()
        .unwrap_or_else(|| path.to_path_buf()))
}

/// `path` and every path its symbolic links lead to, in order, the last one not a link;
/// a loop of links is an error.
fn link_chain(path: &Path) -> io::Result<Vec<std::path::PathBuf>> {
    let mut chain = vec![path.to_path_buf()];
    for _ in 0..MAX_LINKS {
        let current = chain.last().cloned().unwrap_or_default();
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&current)?;
                chain.push(parent_dir(&current).join(target));
            }
            _ => return Ok(chain),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links to follow"
    )))
}

/// tempfile's errors end with ` at path "<its temporary file>"`; the user named another
/// path, so that part is cut (the kind and the system's message are kept).
fn without_temp_path(e: io::Error) -> io::Error {
    if e.raw_os_error().is_some() {
        return e;
    }
    let text = e.to_string();
    match text.rsplit_once(" at path \"") {
        Some((message, _)) => io::Error::new(e.kind(), message.to_owned()),
        None => e,
    }
}

#[cfg(unix)]
fn set_readable(file: &std::fs::File) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    file.set_permissions(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn set_readable(_file: &std::fs::File) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[cfg(unix)]
    #[test]
    fn new_files_are_readable_private_ones_are_not_and_existing_modes_stay() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let public = dir.path().join("catalogue.json");
        write_atomic(&public, b"{}").unwrap();
        assert_eq!(mode(&public), 0o644);
        let private = dir.path().join("sessions.jsonl");
        write_atomic_private(&private, b"{}").unwrap();
        assert_eq!(mode(&private), 0o600);
        std::fs::set_permissions(&public, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&public, b"[]").unwrap();
        assert_eq!(mode(&public), 0o640);
        assert_eq!(std::fs::read(&public).unwrap(), b"[]");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_followed_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let target = sub.join("target.jsonl");
        std::fs::write(&target, b"old").unwrap();
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink("sub/target.jsonl", &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        // A dangling link names the file to create.
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink("sub/fresh.json", &dangling).unwrap();
        write_atomic(&dangling, b"{}").unwrap();
        assert!(
            std::fs::symlink_metadata(&dangling)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(sub.join("fresh.json")).unwrap(), b"{}");
        // A loop is an error, not a hang.
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert!(write_atomic(&a, b"x").is_err());
    }

    #[test]
    fn the_same_file_is_found_by_any_path_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run.jsonl");
        let dotted = dir.path().join(".").join("run.jsonl");
        let other = dir.path().join("chart.svg");
        assert!(same_file(&run, &dotted), "neither exists yet");
        assert!(!same_file(&run, &other));
        std::fs::write(&run, b"{}").unwrap();
        assert!(same_file(&run, &dotted));
        #[cfg(unix)]
        {
            let link = dir.path().join("link.svg");
            std::os::unix::fs::symlink("run.jsonl", &link).unwrap();
            assert!(same_file(&run, &link));
            let hard = dir.path().join("hard.svg");
            std::fs::hard_link(&run, &hard).unwrap();
            assert!(same_file(&hard, &run));
        }
    }

    /// `--out /dev/stdout | cat`: a pipe reached through a link whose text names no path
    /// (`/proc/self/fd/N` -> `pipe:[…]`) is checked as writable and written in place.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_pipe_behind_a_proc_fd_link_is_checked_and_written_in_place() {
        use std::{io::Read as _, os::fd::AsRawFd as _};
        let (mut reader, writer) = std::io::pipe().unwrap();
        let path = std::path::PathBuf::from(format!("/proc/self/fd/{}", writer.as_raw_fd()));
        check_writable("--out", &path).unwrap();
        write_atomic(&path, b"{}\n").unwrap();
        drop(writer);
        let mut got = String::new();
        reader.read_to_string(&mut got).unwrap();
        assert_eq!(got, "{}\n");
    }

    /// `--out /dev/fd/3 3> file`: a regular file behind an open descriptor is written in
    /// place (the descriptor's file gets the bytes), not replaced by a rename that would
    /// leave the descriptor on an unlinked copy.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_behind_a_proc_fd_link_is_written_in_place() {
        use std::{io::Read as _, os::fd::AsRawFd as _};
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("map.json");
        std::fs::write(&real, b"old and longer").unwrap();
        let held = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&real)
            .unwrap();
        let path = std::path::PathBuf::from(format!("/proc/self/fd/{}", held.as_raw_fd()));
        assert!(through_descriptor(&path).unwrap());
        check_writable("--out", &path).unwrap();
        write_atomic(&path, b"{}\n").unwrap();
        // The descriptor's file and the named file are still one, and hold the new bytes.
        let mut got = String::new();
        std::fs::File::open(&real)
            .unwrap()
            .read_to_string(&mut got)
            .unwrap();
        assert_eq!(got, "{}\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(!through_descriptor(&real).unwrap());
        assert!(is_descriptor_path(Path::new("/dev/fd/3")));
        assert!(is_descriptor_path(Path::new("/dev/stdout")));
        assert!(!is_descriptor_path(Path::new("/dev/null")));
        assert!(!is_descriptor_path(Path::new("/tmp/fd/3")));
    }

    #[test]
    fn a_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let message = write_atomic(dir.path(), b"{}").unwrap_err().to_string();
        assert!(message.contains("is a directory"), "{message}");
    }

    #[test]
    fn a_missing_directory_is_named_by_the_path_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no-such-dir").join("out.json");
        let message = write_atomic(&path, b"{}").unwrap_err().to_string();
        assert!(message.contains("out.json"), "{message}");
        assert!(!message.contains("at path"), "{message}");
    }
}
