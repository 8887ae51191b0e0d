//! Line-framed pipes. Readers run as their own tasks and hand whole lines to
//! the session loop over a channel; writers run as their own tasks (or, for
//! our stdout, a blocking thread) fed by unbounded channels. So the session
//! loop never waits on a pipe: a slow or stuck peer cannot block the other
//! direction (no pipe deadlock), and the channel receive it selects on is
//! cancel-safe.

use std::io::Write;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;

/// One line without its terminator. `lossy` says invalid UTF-8 was replaced.
#[derive(Debug)]
pub struct Line {
    pub text: String,
    pub lossy: bool,
}

/// Reads `reader` line by line (any length; an unterminated last line is
/// delivered too), sending `on_line(line)` for each non-blank line and then
/// `on_end(error)` once: `None` at a clean EOF, `Some(text)` on a read error.
pub async fn read_lines<R, E>(
    reader: R,
    events: mpsc::Sender<E>,
    on_line: impl Fn(Line) -> E,
    on_end: impl FnOnce(Option<String>) -> E,
) where
    R: AsyncRead + Unpin,
{
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let mut buf = Vec::new();
    let end = loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) => break None,
            Ok(_) => {
                while matches!(buf.last(), Some(b'\n' | b'\r')) {
                    buf.pop();
                }
                if buf.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let line = match String::from_utf8(std::mem::take(&mut buf)) {
                    Ok(text) => Line { text, lossy: false },
                    Err(e) => Line {
                        text: String::from_utf8_lossy(e.as_bytes()).into_owned(),
                        lossy: true,
                    },
                };
                if events.send(on_line(line)).await.is_err() {
                    return; // the session is over
                }
            }
            Err(e) => break Some(e.to_string()),
        }
    };
    let _ = events.send(on_end(end)).await;
}

/// What the writer task should do next.
pub enum WriteCmd {
    Line(String),
    /// Flush and close the pipe (for the agent: its stdin EOF).
    Close,
}

/// Writes each line plus `\n`, flushing whenever the queue runs empty. Returns
/// the write error, if any, after which the pipe is dropped.
pub async fn write_lines<W>(
    writer: W,
    mut commands: mpsc::UnboundedReceiver<WriteCmd>,
) -> Option<std::io::Error>
where
    W: AsyncWrite + Unpin,
{
    let mut writer = BufWriter::with_capacity(1 << 16, writer);
    while let Some(cmd) = commands.recv().await {
        let result = match cmd {
            WriteCmd::Line(line) => write_line(&mut writer, &line, commands.is_empty()).await,
            WriteCmd::Close => break,
        };
        if let Err(e) = result {
            return Some(e);
        }
    }
    let flushed = writer.flush().await.err();
    let _ = writer.into_inner().shutdown().await;
    flushed
}

/// [`write_lines`] on a blocking writer, for a thread of its own (not an
/// async task): our stdout. tokio writes stdout on a blocking thread anyway,
/// but in 2 MiB pieces each handed over by the runtime's one thread, so a
/// large line stalled whenever the core was busy; here the whole line is
/// written while the core goes on.
pub fn write_lines_blocking<W: Write>(
    writer: W,
    mut commands: mpsc::UnboundedReceiver<WriteCmd>,
) -> Option<std::io::Error> {
    let mut writer = std::io::BufWriter::with_capacity(1 << 16, writer);
    while let Some(cmd) = commands.blocking_recv() {
        let result = match cmd {
            WriteCmd::Line(line) => writer
                .write_all(line.as_bytes())
                .and_then(|()| writer.write_all(b"\n"))
                .and_then(|()| match commands.is_empty() {
                    true => writer.flush(),
                    false => Ok(()),
                }),
            WriteCmd::Close => break,
        };
        if let Err(e) = result {
            return Some(e);
        }
    }
    writer.flush().err()
}

async fn write_line<W: AsyncWrite + Unpin>(
    writer: &mut BufWriter<W>,
    line: &str,
    flush: bool,
) -> std::io::Result<()> {
    writer.write_all(line.as_bytes()).await?;
    writer.write_all(b"\n").await?;
    if flush {
        writer.flush().await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    enum Ev {
        Line(String, bool),
        End(Option<String>),
    }

    async fn lines_of(input: &'static [u8]) -> Vec<Ev> {
        let (tx, mut rx) = mpsc::channel(16);
        read_lines(input, tx, |l| Ev::Line(l.text, l.lossy), Ev::End).await;
        let mut out = Vec::new();
        while let Ok(ev) = rx.try_recv() {
            out.push(ev);
        }
        out
    }

    #[tokio::test]
    async fn reader_splits_lines_and_keeps_an_unterminated_tail() {
        let got = lines_of(b"{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}").await;
        assert_eq!(
            got,
            vec![
                Ev::Line("{\"a\":1}".into(), false),
                Ev::Line("{\"b\":2}".into(), false),
                Ev::Line("{\"c\":3}".into(), false),
                Ev::End(None),
            ]
        );
    }

    #[tokio::test]
    async fn reader_replaces_invalid_utf8_and_says_so() {
        let got = lines_of(b"ok\n\xff\xfe bad\n").await;
        assert_eq!(got[0], Ev::Line("ok".into(), false));
        assert_eq!(got[1], Ev::Line("\u{fffd}\u{fffd} bad".into(), true));
    }

    /// Two lines, a close, and a line after it (never written).
    fn lines_then_close() -> mpsc::UnboundedReceiver<WriteCmd> {
        let (tx, rx) = mpsc::unbounded_channel();
        for cmd in [
            WriteCmd::Line("one".into()),
            WriteCmd::Line("two".into()),
            WriteCmd::Close,
            WriteCmd::Line("after close".into()),
        ] {
            tx.send(cmd).unwrap();
        }
        rx
    }

    #[tokio::test]
    async fn writer_terminates_each_line_and_stops_at_close() {
        let mut out = Vec::new();
        assert!(write_lines(&mut out, lines_then_close()).await.is_none());
        assert_eq!(out, b"one\ntwo\n");
    }

    #[test]
    fn blocking_writer_terminates_each_line_and_stops_at_close() {
        let mut out = Vec::new();
        assert!(write_lines_blocking(&mut out, lines_then_close()).is_none());
        assert_eq!(out, b"one\ntwo\n");
    }
}
