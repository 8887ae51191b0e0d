//! Just enough of an MCP client to ask a server which tools it lists:
//! `initialize`, `notifications/initialized`, `tools/list` (every page),
//! then `DELETE` of the session, over Streamable HTTP.
//!
//! The bridge has no HTTP client crate and needs this one exchange, so this
//! is a minimal HTTP/1.1 client over a tokio `TcpStream`, **for `http://`
//! URLs of loopback hosts only** (the panel's servers run beside it; any
//! other URL is refused with an error naming it): one request per
//! connection (`Connection: close`), a body framed by `Content-Length`,
//! chunked or by the connection's end, a reply as JSON or read from an SSE
//! stream up to the event that carries it. Every exchange is bounded by the
//! caller's timeout ([`list_tools_within`]).

use std::net::SocketAddr;
use std::time::Duration;

use acp_bridge::McpEndpoint;
use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The MCP protocol version the client asks for (the server may answer
/// another it supports; later requests carry that one).
const PROTOCOL: &str = "2025-06-18";
/// How many `tools/list` pages are read at most.
const MAX_PAGES: u64 = 16;
/// The most of a reply's head and body kept: a tool list is small.
const MAX_REPLY_BYTES: usize = 8 << 20;
/// How long ending the session may take (it is only good manners).
const END_SESSION_TIMEOUT: Duration = Duration::from_millis(500);

/// The names of the tools `server` lists, or why they are not known, within
/// `limit` in all.
pub async fn list_tools_within(server: &McpEndpoint, limit: Duration) -> Result<Vec<String>> {
    match tokio::time::timeout(limit, list_tools(server)).await {
        Ok(listed) => listed,
        Err(_) => bail!("no tool list within {} ms", limit.as_millis()),
    }
}

async fn list_tools(server: &McpEndpoint) -> Result<Vec<String>> {
    let target = Target::parse(&server.url)?;
    let mut headers = Vec::new();
    if let Some(auth) = &server.authorization {
        headers.push(("Authorization", auth.clone()));
    }
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "acp-bridge", "version": env!("CARGO_PKG_VERSION")},
    }});
    let reply = target.post(&headers, &init, Some(1)).await?;
    let result = rpc_result(reply.message, "initialize")?;
    let protocol = result["protocolVersion"].as_str().unwrap_or(PROTOCOL);
    headers.push(("MCP-Protocol-Version", protocol.to_string()));
    let session = reply.session.clone();
    if let Some(session) = &session {
        headers.push(("Mcp-Session-Id", session.clone()));
    }
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    target.post(&headers, &initialized, None).await?;
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for page in 0..MAX_PAGES {
        let id = 2 + page;
        let params = cursor.map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params});
        let reply = target.post(&headers, &request, Some(id)).await?;
        let result = rpc_result(reply.message, "tools/list")?;
        let listed = result["tools"]
            .as_array()
            .ok_or_else(|| anyhow!("tools/list answered without a tools array"))?;
        tools.extend(
            listed
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string)),
        );
        cursor = result["nextCursor"].as_str().map(str::to_string);
        if cursor.is_none() {
            break;
        }
    }
    if session.is_some() {
        // a server keeps a session until it is ended; a failure here costs nothing
        let _ = tokio::time::timeout(END_SESSION_TIMEOUT, target.delete(&headers)).await;
    }
    Ok(tools)
}

/// The `result` object of a JSON-RPC reply to `method`.
fn rpc_result(message: Option<Value>, method: &str) -> Result<Value> {
    let message = message.ok_or_else(|| anyhow!("{method} got no JSON-RPC reply"))?;
    if let Some(error) = message.get("error") {
        bail!(
            "{method} failed: {}",
            error["message"].as_str().unwrap_or("(no message)")
        );
    }
    match message.get("result") {
        Some(result @ Value::Object(_)) => Ok(result.clone()),
        _ => bail!("{method} answered without a result object"),
    }
}

/// Where a server is: a loopback host's port and the request path.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    /// The URL's `host[:port]`, for the `Host` header.
    authority: String,
    host: String,
    port: u16,
    /// Path and query.
    path: String,
}

/// What one POST got back.
struct Reply {
    session: Option<String>,
    /// The JSON-RPC reply to the request's id (`None` for a notification).
    message: Option<Value>,
}

impl Target {
    fn parse(url: &str) -> Result<Target> {
        let only = "only http:// URLs of loopback hosts are listed";
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| anyhow!("{url} is not an http:// URL ({only})"))?;
        let split = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(split);
        let path = match path {
            "" => "/".to_string(),
            p if p.starts_with('?') => format!("/{p}"),
            p => p.to_string(),
        };
        if authority.contains('@') || path.contains(['\r', '\n', ' ']) {
            bail!("{url} is not a URL this client can ask ({only}, without user info)");
        }
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (host, after) = v6
                    .split_once(']')
                    .ok_or_else(|| anyhow!("{url}: unclosed [ in the host"))?;
                (host, after.strip_prefix(':'))
            }
            None => match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            },
        };
        let port = match port {
            Some(p) => p
                .parse()
                .with_context(|| format!("{url}: bad port {p:?}"))?,
            None => 80,
        };
        if host.is_empty() {
            bail!("{url} has no host");
        }
        Ok(Target {
            authority: authority.to_string(),
            host: host.to_string(),
            port,
            path,
        })
    }

    /// A connection to the host, which must resolve to loopback addresses only.
    async fn connect(&self) -> Result<TcpStream> {
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((self.host.as_str(), self.port))
            .await
            .with_context(|| format!("cannot resolve {}", self.host))?
            .collect();
        if addrs.is_empty() || !addrs.iter().all(|a| a.ip().is_loopback()) {
            bail!(
                "{} is not a loopback host: only loopback servers are listed",
                self.host
            );
        }
        let mut last = None;
        for addr in addrs {
            match TcpStream::connect(addr).await {
                Ok(stream) => return Ok(stream),
                Err(e) => last = Some(e),
            }
        }
        Err(anyhow!(
            "cannot connect to {}: {}",
            self.authority,
            last.map_or_else(String::new, |e| e.to_string())
        ))
    }

    async fn send(
        &self,
        method: &str,
        headers: &[(&str, String)],
        body: Option<&str>,
    ) -> Result<Response> {
        let mut head = format!(
            "{method} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nAccept: application/json, text/event-stream\r\n",
            self.path, self.authority
        );
        for (name, value) in headers {
            if value.contains(['\r', '\n']) {
                bail!("the {name} header has a line break");
            }
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if let Some(body) = body {
            head.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n",
                body.len()
            ));
        }
        head.push_str("\r\n");
        let mut stream = self.connect().await?;
        stream.write_all(head.as_bytes()).await?;
        if let Some(body) = body {
            stream.write_all(body.as_bytes()).await?;
        }
        Response::read_head(stream).await
    }

    /// POSTs one JSON-RPC message; with an `id`, reads the reply to it.
    async fn post(
        &self,
        headers: &[(&str, String)],
        message: &Value,
        id: Option<u64>,
    ) -> Result<Reply> {
        let what = message["method"].as_str().unwrap_or("request").to_string();
        let mut response = self
            .send("POST", headers, Some(&message.to_string()))
            .await?;
        if !(200..300).contains(&response.status) {
            bail!("{what} got HTTP {}", response.status);
        }
        let session = response.header("mcp-session-id").map(str::to_string);
        let message = match id {
            Some(id) => Some(response.reply_to(id).await.context(what)?),
            None => None,
        };
        Ok(Reply { session, message })
    }

    async fn delete(&self, headers: &[(&str, String)]) -> Result<()> {
        self.send("DELETE", headers, None).await.map(drop)
    }
}

/// How a response body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Length(usize),
    /// Chunked: the bytes left of the current chunk (`None`: at a size line).
    Chunked(Option<usize>),
    ToEnd,
    Done,
}

/// A response whose head is read; its body is read on demand.
struct Response {
    stream: TcpStream,
    status: u16,
    headers: Vec<(String, String)>,
    /// Bytes read past what was decoded.
    raw: Vec<u8>,
    framing: Framing,
    /// Body bytes decoded so far.
    body_len: usize,
}

impl Response {
    async fn read_head(mut stream: TcpStream) -> Result<Response> {
        let mut raw = Vec::new();
        let end = loop {
            if let Some(at) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                break at;
            }
            if raw.len() > MAX_REPLY_BYTES || read_more(&mut stream, &mut raw).await? == 0 {
                bail!("the connection ended before the response head");
            }
        };
        let head = String::from_utf8_lossy(&raw[..end]).into_owned();
        raw.drain(..end + 4);
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| anyhow!("not an HTTP response"))?;
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let mut response = Response {
            stream,
            status,
            headers,
            raw,
            framing: Framing::ToEnd,
            body_len: 0,
        };
        response.framing = if response
            .header("transfer-encoding")
            .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"))
        {
            Framing::Chunked(None)
        } else if let Some(n) = response.header("content-length") {
            Framing::Length(n.parse().context("bad Content-Length")?)
        } else {
            Framing::ToEnd
        };
        Ok(response)
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message answering `id`: the JSON body (or the member of
    /// a batch), or the SSE event that carries it.
    async fn reply_to(&mut self, id: u64) -> Result<Value> {
        let answers =
            |v: &Value| v["id"] == id && (v.get("result").is_some() || v.get("error").is_some());
        let sse = self
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let mut body = Vec::new();
        while let Some(bytes) = self.next_body_bytes().await? {
            if sse {
                body.extend(bytes.into_iter().filter(|b| *b != b'\r'));
                while let Some(at) = body.windows(2).position(|w| w == b"\n\n") {
                    let event: Vec<u8> = body.drain(..at + 2).collect();
                    let data: Vec<&str> = std::str::from_utf8(&event)
                        .unwrap_or("")
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:"))
                        .map(|d| d.strip_prefix(' ').unwrap_or(d))
                        .collect();
                    if let Ok(v) = serde_json::from_str::<Value>(&data.join("\n"))
                        && answers(&v)
                    {
                        return Ok(v);
                    }
                }
            } else {
                body.extend(bytes);
            }
        }
        if sse {
            bail!("the event stream ended without the reply");
        }
        let v: Value = serde_json::from_slice(&body).context("the reply is not JSON")?;
        let found = match v {
            Value::Array(batch) => batch.into_iter().find(answers),
            v => Some(v).filter(answers),
        };
        found.ok_or_else(|| anyhow!("the reply does not answer request {id}"))
    }

    /// The next decoded body bytes, `None` at the body's end.
    async fn next_body_bytes(&mut self) -> Result<Option<Vec<u8>>> {
        loop {
            if let Some(bytes) = self.decode()? {
                self.body_len += bytes.len();
                if self.body_len > MAX_REPLY_BYTES {
                    bail!("the reply is over {MAX_REPLY_BYTES} bytes");
                }
                return Ok(Some(bytes));
            }
            if self.framing == Framing::Done {
                return Ok(None);
            }
            if read_more(&mut self.stream, &mut self.raw).await? == 0 {
                return match self.framing {
                    Framing::ToEnd => Ok(None),
                    _ => bail!("the connection ended inside the body"),
                };
            }
        }
    }

    /// Takes what `raw` holds of the body, `None` when it holds none.
    fn decode(&mut self) -> Result<Option<Vec<u8>>> {
        match self.framing {
            Framing::Done => Ok(None),
            Framing::Length(0) => {
                self.framing = Framing::Done;
                Ok(None)
            }
            Framing::Length(left) => {
                let n = left.min(self.raw.len());
                self.framing = Framing::Length(left - n);
                Ok((n > 0).then(|| self.raw.drain(..n).collect()))
            }
            Framing::ToEnd => Ok((!self.raw.is_empty()).then(|| std::mem::take(&mut self.raw))),
            Framing::Chunked(None) => {
                let Some(at) = self.raw.windows(2).position(|w| w == b"\r\n") else {
                    return Ok(None);
                };
                let line = String::from_utf8_lossy(&self.raw[..at]).into_owned();
                self.raw.drain(..at + 2);
                let size = line.split(';').next().unwrap_or("").trim();
                let size = usize::from_str_radix(size, 16)
                    .with_context(|| format!("bad chunk size {size:?}"))?;
                // the last chunk: its trailer is not needed
                self.framing = if size == 0 {
                    Framing::Done
                } else {
                    Framing::Chunked(Some(size))
                };
                self.decode()
            }
            Framing::Chunked(Some(left)) => {
                if left == 0 {
                    // the CRLF after a chunk's data
                    if self.raw.len() < 2 {
                        return Ok(None);
                    }
                    self.raw.drain(..2);
                    self.framing = Framing::Chunked(None);
                    return self.decode();
                }
                let n = left.min(self.raw.len());
                self.framing = Framing::Chunked(Some(left - n));
                Ok((n > 0).then(|| self.raw.drain(..n).collect()))
            }
        }
    }
}

async fn read_more(stream: &mut TcpStream, raw: &mut Vec<u8>) -> Result<usize> {
    let mut buf = [0u8; 16 * 1024];
    let n = stream
        .read(&mut buf)
        .await
        .context("reading the response")?;
    raw.extend_from_slice(&buf[..n]);
    Ok(n)
}

#[cfg(test)]
mod tests;
