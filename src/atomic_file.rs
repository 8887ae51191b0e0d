//! Files someone depends on (recordings, drift reports, matrices, the HTML
//! report, JUnit files, contracts, UNRUNNABLE.md) are written whole or not
//! at all: into a temp file in the target's own directory, then fsynced and
//! renamed over the target, then the directory fsynced. A run that is killed
//! at any moment leaves the previous file byte-identical; what it leaves
//! behind is a temp file whose name every reader of the corpus ignores
//! (hidden, and ending in [`PARTIAL_SUFFIX`] rather than `.jsonl`).

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
        let dir = parent_dir(target);
        std::fs::create_dir_all(dir)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(PARTIAL_SUFFIX)
            .permissions(readable_permissions())
            .tempfile_in(dir)?;
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

/// Writes `contents` to `path` whole or not at all.
pub fn write(path: &Path, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(contents.as_ref())?;
    file.commit().map(drop)
}

/// The directory a relative bare name lives in is the current one.
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Makes a rename durable: the directory entry reaches the disk too.
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// What a file written by hand would get (the temp file's default is 0600).
fn readable_permissions() -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    std::fs::Permissions::from_mode(0o644)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
