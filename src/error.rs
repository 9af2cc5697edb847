//! Top-level error type. Input errors carry the file and the position; `main` maps each kind
//! to an exit status (1 bad input or data, 2 usage, 3 a regression found by `report`).
use std::path::PathBuf;

/// Everything that can stop a command.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input is not usable: wrong format, unreadable header, truncated compression,
    /// or a diagnostic under `--strict`. The message names the file and the position.
    #[error("{path}: {position}{message}")]
    Input {
        /// File the problem is in.
        path: String,
        /// `line N: ` or `byte N: `, or empty when the whole file is concerned.
        position: String,
        /// What was expected and what was found.
        message: String,
    },
    /// An I/O error on a named file.
    #[error("{path}: {source}")]
    Io {
        /// File concerned.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// The archive is missing, damaged or from an unknown version.
    #[error("archive {path}: {message}")]
    Archive {
        /// Archive directory.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// An SQL statement failed (syntax or execution); DuckDB's message.
    #[error("{0}")]
    Sql(String),
    /// Wrong use of the command line (exit status 2).
    #[error("{0}")]
    Usage(String),
    /// `report --baseline` found a regression or a new deadline miss (exit status 3, so CI
    /// can gate on it); the report was written. The message names each task and figure.
    #[error("regression: {0}")]
    Regression(String),
    /// Writing the output failed.
    #[error("{0}")]
    Output(std::io::Error),
    /// A signal (its number) stopped the command, which took back what it had begun.
    #[error("interrupted by {}: the archive is as it was before this file", crate::signals::name(*.0))]
    Interrupted(i32),
}

impl Error {
    /// An input error at a position (`line 12: `), see [`Error::Input`].
    pub fn input(path: &str, position: impl Into<String>, message: impl Into<String>) -> Self {
        let position = position.into();
        let position = if position.is_empty() { position } else { format!("{position}: ") };
        Error::Input { path: path.to_string(), position, message: message.into() }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }

    /// Exit status for this error: 2 for usage, 3 for a regression found by
    /// `report --baseline`, 1 for everything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => 2,
            Error::Regression(_) => 3,
            _ => 1,
        }
    }

    /// True when the error is a closed pipe on output, which is not a failure.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Output(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

impl From<duckdb::Error> for Error {
    fn from(e: duckdb::Error) -> Self {
        Error::Sql(e.to_string())
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
