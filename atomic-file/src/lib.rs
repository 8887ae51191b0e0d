//! Files someone depends on (recordings, drift reports, matrices, the HTML
//! report, JUnit files, contracts, UNRUNNABLE.md) are written whole or not
//! at all: into a temp file in the target's own directory, then fsynced and
//! renamed over the target, then the directory fsynced. A run that is killed
//! at any moment leaves the previous file byte-identical; what it leaves
//! behind is a temp file whose name every reader of the corpus ignores
//! (hidden, and ending in [`PARTIAL_SUFFIX`] rather than `.jsonl`).
//!
//! An output path someone gives ([`Output`]) need not be a file: a
//! character device, a FIFO, a socket or a `/dev/stdout`-style path is
//! written in place (streamed, never renamed over); a symlink's target is
//! replaced, the link kept; a directory or a place that cannot be written is
//! refused by [`Output::prepare`] before any work, not after it.
//!
//! The temp file is created exclusively (`O_EXCL`) under a random name, so a
//! link planted where it will be never redirects the write. A
//! [`Privacy::OwnerOnly`] output (a user's session, say) is created 0600 and
//! any directory made for it 0700; on Windows a file takes its directory's
//! access rules.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// How a temp file's name ends: never a name a reader picks up.
pub const PARTIAL_SUFFIX: &str = ".partial";

/// A file being written for `target`; [`AtomicFile::commit`] puts it in
/// place. Dropped uncommitted, the temp file is removed and the target is
/// untouched.
#[derive(Debug)]
pub struct AtomicFile {
    temp: tempfile::NamedTempFile,
    target: PathBuf,
}

impl AtomicFile {
    /// Creates the temp file next to `target` (making the directory).
    pub fn create(target: &Path) -> io::Result<AtomicFile> {
        AtomicFile::create_as(target, Privacy::Readable)
    }

    /// As [`AtomicFile::create`], readable by whom `privacy` says.
    pub fn create_as(target: &Path, privacy: Privacy) -> io::Result<AtomicFile> {
        let dir = parent_dir(target);
        create_dirs(dir, privacy)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(PARTIAL_SUFFIX);
        #[cfg(unix)]
        builder.permissions(privacy.permissions());
        let temp = builder.tempfile_in(dir)?;
        Ok(AtomicFile {
            temp,
            target: target.to_path_buf(),
        })
    }

    /// Where the bytes are while the file is being written.
    pub fn temp_path(&self) -> &Path {
        self.temp.path()
    }

    /// Where the file goes on commit.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Hands what was written to the disk (a commit after this is a rename).
    pub fn sync(&mut self) -> io::Result<()> {
        self.temp.flush()?;
        self.temp.as_file().sync_all()
    }

    /// Replaces everything from byte `at` on with `bytes` (a trailer
    /// rewritten before the file is put anywhere).
    pub fn rewrite_from(&mut self, at: u64, bytes: &[u8]) -> io::Result<()> {
        use std::io::{Seek, SeekFrom};
        self.temp.flush()?;
        let file = self.temp.as_file_mut();
        file.set_len(at)?;
        file.seek(SeekFrom::Start(at))?;
        file.write_all(bytes)?;
        file.sync_all()
    }

    /// Syncs the file, renames it over the target, syncs the directory.
    pub fn commit(self) -> io::Result<PathBuf> {
        let target = self.target.clone();
        self.persist_as(&target)?;
        Ok(target)
    }

    /// As [`AtomicFile::commit`], but never over an existing file: a file
    /// at the target (even one made a moment ago) is an `AlreadyExists`
    /// error, and the temp file is removed.
    pub fn commit_new(mut self) -> io::Result<PathBuf> {
        self.temp.flush()?;
        self.temp.as_file().sync_all()?;
        let target = self.target.clone();
        self.temp.persist_noclobber(&target).map_err(|e| {
            io::Error::new(e.error.kind(), format!("{}: {}", target.display(), e.error))
        })?;
        sync_dir(parent_dir(&target))?;
        Ok(target)
    }

    /// Syncs the file and renames it to `path` (in the same directory)
    /// instead of the target: what an interrupted run keeps for inspection.
    pub fn persist_as(mut self, path: &Path) -> io::Result<()> {
        self.temp.flush()?;
        self.temp.as_file().sync_all()?;
        self.temp.persist(path).map_err(|e| e.error)?;
        sync_dir(parent_dir(path))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.temp.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.temp.flush()
    }
}

/// Writes `contents` to `path` whole or not at all (as [`Output`] writes).
pub fn write(path: &Path, contents: impl AsRef<[u8]>) -> io::Result<()> {
    Output::prepare(path)?.write(contents)
}

/// How a lock file's name ends, beside the file it guards (`.<name>.lock`).
pub const LOCK_SUFFIX: &str = ".lock";

/// Read-modify-write of a file that several processes update (rows added
/// to a shared table, say): under an exclusive lock on `.<name>.lock` in the
/// same directory (the file itself is renamed over, so it cannot carry the
/// lock), reads `path` (empty when missing), and writes `edit`'s result
/// whole when it differs. The lock is waited for at most `wait`; then the
/// error is `TimedOut`, naming the lock file. Returns whether it wrote.
pub fn update(
    path: &Path,
    wait: std::time::Duration,
    edit: impl FnOnce(&str) -> String,
) -> io::Result<bool> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "a path with no file name"))?;
    let lock_path = path.with_file_name(format!(".{}{LOCK_SUFFIX}", name.to_string_lossy()));
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)?;
    let deadline = std::time::Instant::now() + wait;
    loop {
        match lock.try_lock() {
            Ok(()) => break,
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "{} is held by another process for more than {} s",
                        lock_path.display(),
                        wait.as_secs()
                    ),
                ));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let updated = edit(&existing);
    let changed = updated != existing;
    if changed {
        write(path, updated)?;
    }
    // the lock ends when `lock` is closed, after the rename
    drop(lock);
    Ok(changed)
}

/// An output path, looked at before anything is written to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// A regular file or nothing yet (a symlink's final target): replaced
    /// whole through a temp file beside it.
    Replace(PathBuf),
    /// A character device, FIFO, socket or `/proc` file descriptor link:
    /// opened as given and written in place (appended to, never truncated
    /// or renamed over).
    InPlace(PathBuf),
}

impl Output {
    /// Looks at `path`: what is there decides how it is written. A
    /// directory, a symlink loop or a directory that cannot take a file is
    /// an error naming the path, so a command can refuse before its run.
    pub fn prepare(path: &Path) -> io::Result<Output> {
        Output::prepare_as(path, Privacy::Readable)
    }

    /// As [`Output::prepare`]; directories it makes are as `privacy` says.
    pub fn prepare_as(path: &Path, privacy: Privacy) -> io::Result<Output> {
        let (resolved, magic) = resolve_links(path)?;
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("{} is a directory, not a file to write", path.display()),
                ));
            }
            Ok(meta) if magic || is_stream(&meta.file_type()) => {
                return Ok(Output::InPlace(path.to_path_buf()));
            }
            Err(e) if magic => {
                return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display())));
            }
            _ => {}
        }
        let dir = parent_dir(&resolved);
        create_dirs(dir, privacy)
            .map_err(|e| io::Error::new(e.kind(), format!("creating {}: {e}", dir.display())))?;
        // a temp file is what the write makes there: prove it can
        tempfile::Builder::new()
            .prefix(".acp-harness-probe.")
            .suffix(PARTIAL_SUFFIX)
            .tempfile_in(dir)
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot write into {}: {e}", dir.display()),
                )
            })?;
        Ok(Output::Replace(resolved))
    }

    /// Opens the output to be written bit by bit: a file through its temp
    /// file (put in place by [`OutputFile::commit`], removed if dropped
    /// before), anything else in place.
    pub fn open(&self, privacy: Privacy) -> io::Result<OutputFile> {
        match self {
            Output::Replace(target) => {
                AtomicFile::create_as(target, privacy).map(OutputFile::Whole)
            }
            Output::InPlace(path) => {
                open_in_place(path).map(|file| OutputFile::InPlace(file, path.clone()))
            }
        }
    }

    /// Where the bytes end up (the symlink's target for a link).
    pub fn path(&self) -> &Path {
        match self {
            Output::Replace(p) | Output::InPlace(p) => p,
        }
    }

    /// Writes `contents`: whole or not at all for a file, streamed in place
    /// otherwise.
    pub fn write(&self, contents: impl AsRef<[u8]>) -> io::Result<()> {
        match self {
            Output::Replace(target) => {
                let mut file = AtomicFile::create(target)?;
                file.write_all(contents.as_ref())?;
                file.commit().map(drop)
            }
            Output::InPlace(path) => {
                let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
                file.write_all(contents.as_ref())?;
                file.flush()
            }
        }
    }
}

/// Opens a device, FIFO or descriptor to append to without waiting: a FIFO
/// nobody reads is an error now (`ENXIO`), not a wait for a reader that may
/// never come. Writes then block as usual.
#[cfg(unix)]
fn open_in_place(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => io::Error::new(
                e.kind(),
                format!("{}: a FIFO nobody reads ({e})", path.display()),
            ),
            _ => e,
        })?;
    // SAFETY: fcntl on a descriptor this function owns.
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(file)
}

#[cfg(not(unix))]
fn open_in_place(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new().append(true).open(path)
}

/// Who may read an output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Privacy {
    /// 0644: what a file written by hand would get (reports, recordings).
    Readable,
    /// 0600, in a directory made 0700: what only its user may read.
    OwnerOnly,
}

impl Privacy {
    #[cfg(unix)]
    fn permissions(self) -> std::fs::Permissions {
        use std::os::unix::fs::PermissionsExt;
        std::fs::Permissions::from_mode(match self {
            Privacy::Readable => 0o644,
            Privacy::OwnerOnly => 0o600,
        })
    }
}

/// Makes `dir` and its missing parents; for [`Privacy::OwnerOnly`] the
/// directories made are 0700 (one that exists keeps its mode).
pub fn create_dirs(dir: &Path, privacy: Privacy) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    if privacy == Privacy::OwnerOnly {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    #[cfg(not(unix))]
    let _ = privacy;
    builder.create(dir)
}

/// An [`Output`] being written bit by bit.
#[derive(Debug)]
pub enum OutputFile {
    /// A file, written whole or not at all.
    Whole(AtomicFile),
    /// A device, FIFO or descriptor, written as the bytes come.
    InPlace(File, PathBuf),
}

impl OutputFile {
    /// Where the bytes are while the output is being written.
    pub fn writing_to(&self) -> &Path {
        match self {
            OutputFile::Whole(file) => file.temp_path(),
            OutputFile::InPlace(_, path) => path,
        }
    }

    /// Puts a file in place (synced, renamed, its directory synced); an
    /// output written in place is flushed. Returns where the bytes are.
    pub fn commit(self) -> io::Result<PathBuf> {
        match self {
            OutputFile::Whole(file) => file.commit(),
            OutputFile::InPlace(mut file, path) => file.flush().map(|()| path),
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            OutputFile::Whole(file) => file.write(buf),
            OutputFile::InPlace(file, _) => file.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            OutputFile::Whole(file) => file.flush(),
            OutputFile::InPlace(file, _) => file.flush(),
        }
    }
}

/// Checks that `dir` is a directory or can be made one, and takes a file:
/// an output directory is refused before the run, not after it.
pub fn prepare_dir(dir: &Path) -> io::Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{} is not a directory", dir.display()),
        ));
    }
    Output::prepare(&dir.join(".acp-harness-output")).map(drop)
}

/// A file type written in place: what is there is not a file to replace.
#[cfg(unix)]
fn is_stream(t: &std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    t.is_char_device() || t.is_fifo() || t.is_socket() || t.is_block_device()
}

/// On Windows a device (`NUL`, `\\.\pipe\...`) is no file or directory.
#[cfg(not(unix))]
fn is_stream(t: &std::fs::FileType) -> bool {
    !t.is_file() && !t.is_dir() && !t.is_symlink()
}

/// How many symlinks a path may go through (as the kernel's limit).
const MAX_LINKS: usize = 40;

/// Follows `path`'s symlinks to the path they end at (which may not exist
/// yet); also says whether one of them is a `/proc` or `/dev/fd` link (a
/// file descriptor, whose "target" is no path to write).
fn resolve_links(path: &Path) -> io::Result<(PathBuf, bool)> {
    let magic = |p: &Path| p.starts_with("/proc") || p.starts_with("/dev/fd");
    let mut current = path.to_path_buf();
    let mut through_magic = magic(&current);
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&current)?;
                current = if target.is_absolute() {
                    target
                } else {
                    parent_dir(&current).join(target)
                };
                through_magic |= magic(&current);
            }
            _ => return Ok((current, through_magic)),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{}: more than {MAX_LINKS} symbolic links (a loop?)",
            path.display()
        ),
    ))
}

/// The directory a relative bare name lives in is the current one.
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Makes a rename durable: the directory entry reaches the disk too.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Windows makes a rename durable itself (and opens no directory as a file).
#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// Processes adding rows to one file at once lose none: each
    /// read-modify-write runs under the lock (threads with their own open
    /// lock files conflict as processes do).
    #[test]
    fn concurrent_updates_lose_no_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("TABLE.md");
        std::thread::scope(|scope| {
            for t in 0..8 {
                let path = &path;
                scope.spawn(move || {
                    for i in 0..25 {
                        update(path, std::time::Duration::from_secs(30), |text| {
                            format!("{text}row {t}-{i}\n")
                        })
                        .unwrap();
                    }
                });
            }
        });
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 200, "{text}");
    }

    #[test]
    fn a_lock_held_past_the_wait_is_a_timeout_naming_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("TABLE.md");
        let held = File::create(dir.path().join(".TABLE.md.lock")).unwrap();
        held.lock().unwrap();
        let e = update(&path, std::time::Duration::from_millis(50), |t| {
            format!("{t}x")
        })
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(e.to_string().contains(".TABLE.md.lock"), "{e}");
        assert!(!path.exists());
    }

    #[test]
    fn a_symlinked_output_replaces_its_target_and_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.xml");
        let link = dir.path().join("link.xml");
        std::fs::write(&real, "old\n").unwrap();
        std::os::unix::fs::symlink("real.xml", &link).unwrap();
        write(&link, "new\n").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new\n");
        // a dangling link: its target is made
        let dangling = dir.path().join("dangling.xml");
        std::os::unix::fs::symlink("sub/made.xml", &dangling).unwrap();
        write(&dangling, "made\n").unwrap();
        assert!(
            std::fs::symlink_metadata(&dangling)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("sub/made.xml")).unwrap(),
            "made\n"
        );
    }

    #[test]
    fn devices_fifos_and_descriptor_links_are_written_in_place() {
        assert_eq!(
            Output::prepare(Path::new("/dev/null")).unwrap(),
            Output::InPlace("/dev/null".into())
        );
        assert!(matches!(
            Output::prepare(Path::new("/dev/stdout")).unwrap(),
            Output::InPlace(_)
        ));
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write(&fifo, "streamed\n").unwrap();
        assert_eq!(reader.join().unwrap(), "streamed\n");
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
    }

    #[test]
    fn a_directory_a_symlink_loop_or_a_file_as_directory_is_refused_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let err = Output::prepare(dir.path()).unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        let err = Output::prepare(&a).unwrap_err();
        assert!(err.to_string().contains("symbolic links"), "{err}");
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        assert!(Output::prepare(&file.join("x.xml")).is_err());
        let err = prepare_dir(&file).unwrap_err();
        assert!(err.to_string().contains("is not a directory"), "{err}");
    }

    #[test]
    fn an_uncommitted_file_leaves_the_target_as_it_was_and_no_temp_behind() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("r.jsonl");
        std::fs::write(&target, "previous\n").unwrap();
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"half a rec").unwrap();
        let temp = f.temp_path().to_path_buf();
        let name = temp.file_name().unwrap().to_str().unwrap().to_string();
        assert!(name.starts_with(".r.jsonl.") && name.ends_with(PARTIAL_SUFFIX));
        assert_eq!(temp.parent(), Some(dir.path()));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "previous\n");
        drop(f);
        assert!(!temp.exists());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "previous\n");
    }

    #[test]
    fn commit_replaces_the_target_and_makes_missing_directories() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a/b/out.md");
        write(&target, "whole\n").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "whole\n");
        write(&target, "again\n").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "again\n");
        let left: Vec<_> = std::fs::read_dir(target.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("out.md")]);
    }

    #[test]
    fn an_owner_only_output_is_0600_in_directories_made_0700() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("made/deeper/tap.jsonl");
        let output = Output::prepare_as(&target, Privacy::OwnerOnly).unwrap();
        let mut file = output.open(Privacy::OwnerOnly).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(file.writing_to()), 0o600, "the temp file");
        file.write_all(b"line\n").unwrap();
        assert_eq!(file.commit().unwrap(), target);
        assert_eq!(mode(&target), 0o600);
        assert_eq!(mode(&dir.path().join("made")), 0o700);
        assert_eq!(mode(&dir.path().join("made/deeper")), 0o700);
    }

    #[test]
    fn a_planted_link_at_a_temp_name_is_never_written_through() {
        // The temp name is random and opened O_EXCL: whatever names an
        // attacker plants beside the target, the write lands in a file of
        // its own and the planted links' targets keep their bytes.
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep\n").unwrap();
        let target = dir.path().join("tap.jsonl");
        for pid in [std::process::id(), 1, 2] {
            let planted = dir.path().join(format!(".tap.jsonl.{pid}.partial"));
            std::os::unix::fs::symlink(&victim, planted).unwrap();
        }
        let output = Output::prepare_as(&target, Privacy::OwnerOnly).unwrap();
        let mut file = output.open(Privacy::OwnerOnly).unwrap();
        assert!(
            !std::fs::symlink_metadata(file.writing_to())
                .unwrap()
                .is_symlink()
        );
        file.write_all(b"session\n").unwrap();
        file.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "session\n");
    }

    #[test]
    fn an_output_file_dropped_before_its_commit_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("tap.jsonl");
        let mut file = Output::prepare(&target)
            .unwrap()
            .open(Privacy::OwnerOnly)
            .unwrap();
        file.write_all(b"half").unwrap();
        drop(file);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_output_opened_on_a_fifo_nobody_reads_is_an_error_not_a_wait() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = Output::prepare(&fifo)
            .unwrap()
            .open(Privacy::OwnerOnly)
            .unwrap_err();
        assert!(e.to_string().contains("a FIFO nobody reads"), "{e}");
    }

    #[test]
    fn an_output_opened_on_a_fifo_streams_into_it() {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let mut reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        let output = Output::prepare_as(&fifo, Privacy::OwnerOnly).unwrap();
        assert_eq!(output, Output::InPlace(fifo.clone()));
        let mut file = output.open(Privacy::OwnerOnly).unwrap();
        file.write_all(b"streamed\n").unwrap();
        assert_eq!(file.commit().unwrap(), fifo);
        let mut got = String::new();
        reader.read_to_string(&mut got).unwrap();
        assert_eq!(got, "streamed\n");
        assert!(is_stream(
            &std::fs::symlink_metadata(&fifo).unwrap().file_type()
        ));
    }
}
