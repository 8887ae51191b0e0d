//! Opening a corpus file (a recording, a golden) that a pull request may
//! have put there: only a regular file is read. A symlink could point out
//! of the repository (its lines would be printed into diffs, JUnit and the
//! report), a device never ends (`/dev/zero`) and a FIFO never answers, so
//! each is refused with an error naming it, never followed.

use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

/// What a path is, when it is no regular file: the refusal's words.
fn refusal(meta: &Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_symlink() {
        Some("a symbolic link")
    } else if kind.is_dir() {
        Some("a directory")
    } else if !kind.is_file() {
        Some("not a regular file (a device, FIFO or socket)")
    } else {
        None
    }
}

fn refused(path: &Path, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is {what}: the corpus holds regular files only, and this one is not read",
            path.display()
        ),
    )
}

/// Whether something is at `path` (a dangling symlink is something: it is
/// refused, not taken for a missing file).
pub fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// The error for `path` if it is there and is no regular file.
pub fn check(path: &Path) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    match refusal(&meta) {
        Some(what) => Err(refused(path, what)),
        None => Ok(()),
    }
}

/// Opens `path` for reading if it is a regular file. The check is made on
/// the path without following it, and again on what was opened (opened
/// without following a link and without waiting on a FIFO), so a file
/// swapped in between is refused too.
pub fn open(path: &Path) -> io::Result<File> {
    check(path)?;
    let file = open_no_follow(path)?;
    match refusal(&file.metadata()?) {
        Some(what) => Err(refused(path, what)),
        None => Ok(file),
    }
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> io::Result<File> {
    File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_opens_and_a_missing_one_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.jsonl");
        std::fs::write(&file, "x\n").unwrap();
        assert!(open(&file).is_ok());
        let missing = dir.path().join("b.jsonl");
        assert!(!exists(&missing));
        assert_eq!(open(&missing).unwrap_err().kind(), io::ErrorKind::NotFound);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_devices_fifos_and_directories_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "secret\n").unwrap();
        let link = dir.path().join("link.snap");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let dangling = dir.path().join("dangling.snap");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        let fifo = dir.path().join("fifo.snap");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let cases = [
            (link, "a symbolic link"),
            (dangling.clone(), "a symbolic link"),
            (fifo, "not a regular file"),
            (dir.path().to_path_buf(), "a directory"),
            (std::path::PathBuf::from("/dev/zero"), "not a regular file"),
        ];
        for (path, want) in cases {
            let e = open(&path).unwrap_err();
            let text = e.to_string();
            assert!(text.contains(want), "{}: {text}", path.display());
            assert!(text.contains(&path.display().to_string()), "{text}");
        }
        assert!(exists(&dangling));
    }
}
