//! What the commands share about output: `--color` (auto: a terminal and
//! `NO_COLOR` unset) and a stdout that strips styling when colour is off, so
//! the domain renders styled text once and never asks about the terminal.

use std::io::Write as _;

/// `--color auto|always|never`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Color {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset.
    #[default]
    Auto,
    Always,
    Never,
}

impl Color {
    fn choice(self) -> anstream::ColorChoice {
        match self {
            Color::Auto => anstream::ColorChoice::Auto,
            Color::Always => anstream::ColorChoice::Always,
            Color::Never => anstream::ColorChoice::Never,
        }
    }
}

/// Stdout that keeps or strips ANSI styling per `--color`.
pub struct Out {
    stream: anstream::AutoStream<std::io::Stdout>,
}

impl Out {
    pub fn new(color: Color) -> Out {
        Out {
            stream: anstream::AutoStream::new(std::io::stdout(), color.choice()),
        }
    }

    /// Whether what is printed keeps its styling (worth rendering styled).
    pub fn styled(&self) -> bool {
        self.stream.current_choice() != anstream::ColorChoice::Never
    }

    /// Writes `text` (a closed pipe ends the output quietly).
    pub fn print(&mut self, text: &str) {
        let _ = self.stream.write_all(text.as_bytes());
    }

    /// Writes a transcript, a buffer at a time (a closed pipe ends the
    /// output quietly).
    pub fn print_transcript(&mut self, text: &crate::judging::judge::TranscriptText) {
        let _ = text.write_to(&mut self.stream);
    }

    pub fn println(&mut self, text: &str) {
        self.print(text);
        self.print("\n");
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        let _ = self.stream.flush();
    }
}
