//! Secrets are never written in the config file: the file names an environment variable (`{"env": "NAME"}`) or
//! a file readable by its owner alone (`{"file": "/abs/path"}`, mode 0600 or 0400, a regular file, not a
//! symlink, owned by the relay's user). Resolved once at start-up, before the port opens.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Where a secret comes from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum SecretRef {
    Env(String),
    File(PathBuf),
}

/// A resolved secret. `Debug` and `Display` never print the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// The largest secret file accepted (keys and PEM public keys are far smaller).
const MAX_SECRET_FILE_BYTES: u64 = 64 * 1024;

impl SecretRef {
    /// Reads the secret; the error says why without revealing the value.
    pub fn resolve(&self) -> Result<Secret, String> {
        match self {
            SecretRef::Env(name) => match std::env::var(name) {
                Ok(v) if !v.trim().is_empty() => Ok(Secret(v.trim().to_owned())),
                Ok(_) => Err(format!("environment variable `{name}` is empty")),
                Err(_) => Err(format!("environment variable `{name}` is not set")),
            },
            SecretRef::File(path) => {
                read_owner_only_file(path).map(|v| Secret(v.trim().to_owned()))
            }
        }
    }
}

/// Reads a file that only its owner (the relay's user) can read or write. The checks are made on the opened
/// handle (`O_NOFOLLOW`, then `fstat`), not on the path before opening it, so the file cannot be swapped for a
/// symlink or another file between the check and the read; the read is bounded as well.
pub fn read_owner_only_file(path: &Path) -> Result<String, String> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
    if !path.is_absolute() {
        return Err(format!(
            "secret file `{}` must be an absolute path",
            path.display()
        ));
    }
    let not_regular = || {
        format!(
            "secret file `{}` must be a regular file (not a symlink)",
            path.display()
        )
    };
    // O_NOFOLLOW: a symlink as the last component fails to open (ELOOP); O_NONBLOCK: a FIFO does not block.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                not_regular()
            } else {
                format!("secret file `{}`: {e}", path.display())
            }
        })?;
    let meta = file
        .metadata()
        .map_err(|e| format!("secret file `{}`: {e}", path.display()))?;
    if !meta.file_type().is_file() {
        return Err(not_regular());
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "secret file `{}` has mode {mode:04o}; it must be readable by its owner only (0600 or 0400)",
            path.display()
        ));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    #[allow(unsafe_code)]
    let euid = unsafe { libc::geteuid() };
    if meta.uid() != euid {
        return Err(format!(
            "secret file `{}` must be owned by the relay's user (uid {euid})",
            path.display()
        ));
    }
    let too_large = || {
        format!(
            "secret file `{}` is larger than {MAX_SECRET_FILE_BYTES} bytes",
            path.display()
        )
    };
    if meta.len() > MAX_SECRET_FILE_BYTES {
        return Err(too_large());
    }
    let mut text = String::new();
    file.take(MAX_SECRET_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("secret file `{}`: {e}", path.display()))?;
    if text.len() as u64 > MAX_SECRET_FILE_BYTES {
        return Err(too_large());
    }
    if text.trim().is_empty() {
        return Err(format!("secret file `{}` is empty", path.display()));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write_with_mode(dir: &Path, mode: u32) -> PathBuf {
        let path = dir.join(format!("secret-{mode:o}"));
        std::fs::write(&path, "s3cret\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn owner_only_modes_are_accepted_and_trimmed() {
        let dir = tempfile::tempdir().unwrap();
        for mode in [0o600, 0o400] {
            let secret = SecretRef::File(write_with_mode(dir.path(), mode))
                .resolve()
                .unwrap();
            assert_eq!(secret.expose(), "s3cret");
        }
    }

    #[test]
    fn group_or_world_readable_file_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        for mode in [0o640, 0o644, 0o604] {
            let err = SecretRef::File(write_with_mode(dir.path(), mode))
                .resolve()
                .unwrap_err();
            assert!(err.contains("readable by its owner only"), "{err}");
        }
    }

    #[test]
    fn symlink_and_relative_path_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let target = write_with_mode(dir.path(), 0o600);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(SecretRef::File(link)
            .resolve()
            .unwrap_err()
            .contains("symlink"));
        assert!(SecretRef::File("relative/key".into())
            .resolve()
            .unwrap_err()
            .contains("absolute"));
    }

    #[test]
    fn debug_never_prints_the_value() {
        assert_eq!(format!("{:?}", Secret::new("abc")), "Secret(<redacted>)");
    }

    /// The checks run on the opened handle: a FIFO is refused without blocking the start-up, an oversized
    /// file is refused, and a symlink to an owner-only file is still refused (`O_NOFOLLOW`).
    #[test]
    fn fifo_oversized_and_symlinked_files_are_refused_on_the_handle() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo has no other preconditions.
        #[allow(unsafe_code)]
        let made = unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
        assert_eq!(made, 0);
        let err = SecretRef::File(fifo).resolve().unwrap_err();
        assert!(err.contains("regular file"), "{err}");

        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'k'; MAX_SECRET_FILE_BYTES as usize + 1]).unwrap();
        std::fs::set_permissions(&big, std::fs::Permissions::from_mode(0o600)).unwrap();
        let err = SecretRef::File(big).resolve().unwrap_err();
        assert!(err.contains("larger than"), "{err}");

        let target = write_with_mode(dir.path(), 0o600);
        let link = dir.path().join("link-to-owner-only");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = SecretRef::File(link).resolve().unwrap_err();
        assert!(err.contains("not a symlink"), "{err}");
    }
}
