//! The JSON-RPC 2.0 peer: the one module that owns an agent's stdio connection.
//!
//! Why our own and not the official `agent-client-protocol` crate: measured here
//! (`shared/notes/acp-throughput.md`), that crate consumes a flood at about 14% of what plain
//! serde_json parses, and its reader forwards every line on an unbounded channel, so a flooding
//! or stuck agent grows memory without limit. This peer is a reader task, a writer task and two
//! bounded channels:
//!
//! - The reader splits stdout into lines (capped at [`Limits::max_line_bytes`]), parses only the
//!   envelope (params stay raw until their owner parses them into the schema types), and hands
//!   every message, responses included, to ONE bounded channel in arrival order. Because
//!   responses travel the same channel as notifications, whoever consumes it handles a prompt's
//!   response only after every update the agent sent before it: ordering comes for free.
//! - When that channel is full the reader stops reading, the pipe fills, and the agent blocks on
//!   its write: a flood is slowed, never buffered without bound.
//! - Protocol hygiene lives here: batches get -32600, lines that are not JSON (shell profiles print
//!   to stdout) are logged and skipped, over-long lines are skipped without being buffered.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use agent_client_protocol_schema::v1::{self as acp, RequestId};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// JSON-RPC error codes we send.
pub mod codes {
    pub const PARSE_ERROR: i32 = -32700;
    pub const INVALID_REQUEST: i32 = -32600;
    pub const METHOD_NOT_FOUND: i32 = -32601;
    pub const INVALID_PARAMS: i32 = -32602;
    pub const INTERNAL_ERROR: i32 = -32603;
    pub const REQUEST_CANCELLED: i32 = -32800;
}

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Longest line accepted from the agent. Larger lines are skipped (and reported), never held
    /// in memory whole. 16 MiB leaves room for base64 images and large tool outputs while keeping
    /// a runaway agent from costing more than that per line.
    pub max_line_bytes: usize,
    /// Batches read ahead of their consumer (one batch is at most one 128 KiB read). Small
    /// enough that a stalled consumer stops reading quickly, large enough that the reader and the
    /// consumer overlap on two cores.
    pub inbound_capacity: usize,
    /// Lines queued for the agent's stdin. When they are all still waiting, the agent has
    /// stopped reading its input (a healthy agent reads while it works) and sends fail with
    /// [`SendError::Full`] rather than wait forever.
    pub outbound_capacity: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_line_bytes: 16 * 1024 * 1024,
            inbound_capacity: 8,
            outbound_capacity: 1024,
        }
    }
}

/// A message from the agent, in arrival order.
#[derive(Debug)]
pub enum Inbound {
    Request {
        id: RequestId,
        method: String,
        params: Option<Box<RawValue>>,
    },
    Notification {
        method: String,
        params: Option<Box<RawValue>>,
    },
    Response {
        id: RequestId,
        result: Result<Box<RawValue>, acp::Error>,
    },
    /// `$/cancel_request`: the agent no longer needs our answer to request `id` (we must still
    /// answer it).
    CancelRequest { id: RequestId },
    /// Something on stdout was skipped; the connection goes on.
    Skipped(Skipped),
    /// stdout ended (the agent exited or closed it) or could not be read. Always the last item.
    Closed { error: Option<String> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skipped {
    NotJson { preview: String },
    TooLong { bytes: usize },
    Batch,
    Invalid { reason: String },
}

#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error("the agent's input is closed (the agent has exited)")]
    Closed,
    /// The agent has stopped reading its input: [`Limits::outbound_capacity`] lines wait for it.
    /// Senders never wait on that (it could be forever); the session ends such an agent.
    #[error("the agent has stopped reading its input")]
    Full,
    #[error("could not encode the message: {0}")]
    Encode(#[from] serde_json::Error),
}

/// The sending half of a connection. Cheap to clone.
#[derive(Clone)]
pub struct Connection {
    out: mpsc::Sender<Vec<u8>>,
    next_id: Arc<AtomicI64>,
}

impl Connection {
    /// Starts the reader and writer tasks on the current tokio runtime.
    pub fn start<R, W>(stdout: R, stdin: W, limits: Limits) -> (Self, mpsc::Receiver<Vec<Inbound>>)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (in_tx, in_rx) = mpsc::channel(limits.inbound_capacity);
        let (out_tx, out_rx) = mpsc::channel(limits.outbound_capacity);
        tokio::spawn(write_loop(stdin, out_rx));
        // The reader holds only a weak sender, so dropping every `Connection` closes the agent's stdin
        // (the polite first step of shutting it down) even while the reader still runs.
        tokio::spawn(read_loop(stdout, in_tx, out_tx.downgrade(), limits));
        (
            Self {
                out: out_tx,
                next_id: Arc::new(AtomicI64::new(0)),
            },
            in_rx,
        )
    }

    /// Sends a request and returns its id; the answer arrives as [`Inbound::Response`].
    pub fn request<P: Serialize>(&self, method: &str, params: &P) -> Result<RequestId, SendError> {
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let line = encode(&OutRequest {
            jsonrpc: "2.0",
            id: &id,
            method,
            params,
        })?;
        self.send_line(line)?;
        Ok(id)
    }

    pub fn notify<P: Serialize>(&self, method: &str, params: &P) -> Result<(), SendError> {
        let line = encode(&OutNotification {
            jsonrpc: "2.0",
            method,
            params,
        })?;
        self.send_line(line)
    }

    pub fn respond<T: Serialize>(
        &self,
        id: &RequestId,
        result: Result<T, acp::Error>,
    ) -> Result<(), SendError> {
        let line = match result {
            Ok(result) => encode(&OutResult {
                jsonrpc: "2.0",
                id,
                result,
            })?,
            Err(error) => encode(&OutError {
                jsonrpc: "2.0",
                id,
                error,
            })?,
        };
        self.send_line(line)
    }

    pub fn respond_error(
        &self,
        id: &RequestId,
        code: i32,
        message: impl Into<String>,
    ) -> Result<(), SendError> {
        let result: Result<(), _> = Err(acp::Error::new(code, message));
        self.respond(id, result)
    }

    fn send_line(&self, line: Vec<u8>) -> Result<(), SendError> {
        self.out.try_send(line).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => SendError::Full,
            mpsc::error::TrySendError::Closed(_) => SendError::Closed,
        })
    }
}

fn encode<T: Serialize>(msg: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut line = serde_json::to_vec(msg)?;
    line.push(b'\n');
    Ok(line)
}

#[derive(Serialize)]
struct OutRequest<'a, P> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    params: &'a P,
}

#[derive(Serialize)]
struct OutNotification<'a, P> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a P,
}

#[derive(Serialize)]
struct OutResult<'a, T> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: T,
}

#[derive(Serialize)]
struct OutError<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    error: acp::Error,
}

/// The envelope of any JSON-RPC message. Every member stays raw and is checked afterwards, so
/// that one malformed member (an error without a message, an id that is an object) is reported
/// for what it is, and answered when it is a request, instead of the whole line being skipped.
#[derive(Deserialize)]
struct Envelope<'a> {
    /// `Some` whenever the member is present, even when it is `null`.
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    method: Option<&'a RawValue>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// A response's `error`, read as leniently as it can be: an agent that sends a broken error
/// still ends the request it answers.
fn lenient_error(raw: &RawValue) -> acp::Error {
    if let Ok(e) = serde_json::from_str::<acp::Error>(raw.get()) {
        return e;
    }
    let v: serde_json::Value = serde_json::from_str(raw.get()).unwrap_or_default();
    let code = v
        .get("code")
        .and_then(serde_json::Value::as_i64)
        .and_then(|c| i32::try_from(c).ok())
        .unwrap_or(codes::INTERNAL_ERROR);
    let message = v
        .get("message")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| format!("the agent answered with a malformed error: {}", raw.get()));
    acp::Error::new(code, message)
}

/// ACP's `$/cancel_request` names the request `requestId` (the schema's
/// `CancelRequestNotification`; claude-agent-acp 0.101.0 sends that); `id` is LSP's spelling,
/// which earlier agents used.
#[derive(Deserialize)]
struct CancelRequestParams {
    #[serde(rename = "requestId", alias = "id")]
    id: RequestId,
}

async fn write_loop<W: AsyncWrite + Unpin>(stdin: W, mut rx: mpsc::Receiver<Vec<u8>>) {
    let mut w = tokio::io::BufWriter::new(stdin);
    while let Some(line) = rx.recv().await {
        if let Err(e) = w.write_all(&line).await {
            tracing::debug!("agent stdin closed: {e}");
            return;
        }
        // Flush only when nothing else is queued: one syscall per burst, not per message.
        while let Ok(line) = rx.try_recv() {
            if let Err(e) = w.write_all(&line).await {
                tracing::debug!("agent stdin closed: {e}");
                return;
            }
        }
        if let Err(e) = w.flush().await {
            tracing::debug!("agent stdin closed: {e}");
            return;
        }
    }
    // All senders gone: closing stdin is the polite first step of shutting the agent down.
    let _ = w.shutdown().await;
}

async fn read_loop<R: AsyncRead + Unpin>(
    stdout: R,
    tx: mpsc::Sender<Vec<Inbound>>,
    out: mpsc::WeakSender<Vec<u8>>,
    limits: Limits,
) {
    let mut reader = BufReader::with_capacity(READ_BUFFER, stdout);
    // A line that spans reads is assembled here; lines inside one read are parsed in place.
    let mut line: Vec<u8> = Vec::new();
    // Bytes of an over-long line seen so far, while it is being skipped.
    let mut skipping: Option<usize> = None;
    let mut replies: Vec<Vec<u8>> = Vec::new();
    loop {
        let buf = match reader.fill_buf().await {
            Ok(buf) => buf,
            Err(e) => {
                let _ = tx
                    .send(vec![Inbound::Closed {
                        error: Some(format!("could not read the agent's output: {e}")),
                    }])
                    .await;
                return;
            }
        };
        let mut batch = Vec::new();
        if buf.is_empty() {
            if let Some(skipped) = skipping.take() {
                batch.push(too_long(skipped));
            } else if !line.is_empty() {
                // A last line without its newline still counts.
                batch.extend(parse_line(&line, &mut replies));
            }
            batch.push(Inbound::Closed { error: None });
            send_replies(&out, &mut replies);
            let _ = tx.send(batch).await;
            return;
        }
        let mut start = 0;
        for pos in memchr::memchr_iter(b'\n', buf) {
            let segment = &buf[start..pos];
            start = pos + 1;
            if let Some(skipped) = skipping.take() {
                batch.push(too_long(skipped + segment.len()));
            } else if !line.is_empty() {
                if line.len() + segment.len() > limits.max_line_bytes {
                    batch.push(too_long(line.len() + segment.len()));
                } else {
                    line.extend_from_slice(segment);
                    batch.extend(parse_line(&line, &mut replies));
                }
                line.clear();
                if line.capacity() > 1024 * 1024 {
                    // Do not keep a huge buffer alive because one message was big.
                    line = Vec::new();
                }
            } else if segment.len() > limits.max_line_bytes {
                batch.push(too_long(segment.len()));
            } else {
                batch.extend(parse_line(segment, &mut replies));
            }
        }
        let rest = &buf[start..];
        if let Some(skipped) = skipping.as_mut() {
            *skipped += rest.len();
        } else if line.len() + rest.len() > limits.max_line_bytes {
            skipping = Some(line.len() + rest.len());
            line = Vec::new();
        } else {
            line.extend_from_slice(rest);
        }
        let n = buf.len();
        reader.consume(n);
        send_replies(&out, &mut replies);
        // One send per read, not per message: far fewer wake-ups of the consumer under a flood.
        if !batch.is_empty() && tx.send(batch).await.is_err() {
            return;
        }
    }
}

/// Bytes read from the agent at a time; also the most one inbound batch can hold.
const READ_BUFFER: usize = 128 * 1024;

fn too_long(bytes: usize) -> Inbound {
    tracing::warn!("skipped a {bytes}-byte line from the agent");
    Inbound::Skipped(Skipped::TooLong { bytes })
}

/// Protocol-level answers from the reader. Dropped (and logged) when the agent is not reading
/// its input: the reader must never stall on the agent's stdin.
fn send_replies(out: &mpsc::WeakSender<Vec<u8>>, replies: &mut Vec<Vec<u8>>) {
    if replies.is_empty() {
        return;
    }
    if let Some(out) = out.upgrade() {
        for r in replies.drain(..) {
            if out.try_send(r).is_err() {
                tracing::warn!(
                    "dropped a protocol error reply: the agent is not reading its input"
                );
            }
        }
    }
    replies.clear();
}

/// Parses one line. Protocol-level answers (to batches, invalid requests) go to `replies`.
fn parse_line(raw: &[u8], replies: &mut Vec<Vec<u8>>) -> Option<Inbound> {
    let raw = trim_ascii(raw);
    let &first = raw.first()?;
    match first {
        b'{' => match serde_json::from_slice::<Envelope<'_>>(raw) {
            Ok(env) => Some(classify(env, replies)),
            Err(e) => {
                let preview = preview(raw);
                // Its text only at debug: agent output may echo a prompt or a key.
                tracing::warn!(
                    "skipped a {}-byte line from the agent that is not JSON-RPC ({e})",
                    raw.len()
                );
                tracing::debug!("the skipped line began: {preview}");
                Some(Inbound::Skipped(Skipped::NotJson { preview }))
            }
        },
        b'[' if serde_json::from_slice::<serde::de::IgnoredAny>(raw).is_ok() => {
            tracing::warn!("the agent sent a JSON-RPC batch; ACP has none: answered -32600");
            replies.extend(
                encode(&OutError {
                    jsonrpc: "2.0",
                    id: &RequestId::Null,
                    error: acp::Error::new(
                        codes::INVALID_REQUEST,
                        "Batches are not supported by ACP",
                    ),
                })
                .ok(),
            );
            Some(Inbound::Skipped(Skipped::Batch))
        }
        _ => {
            let preview = preview(raw);
            tracing::warn!(
                "skipped a {}-byte non-JSON line on the agent's stdout",
                raw.len()
            );
            tracing::debug!("the skipped line began: {preview}");
            Some(Inbound::Skipped(Skipped::NotJson { preview }))
        }
    }
}

fn classify(env: Envelope<'_>, replies: &mut Vec<Vec<u8>>) -> Inbound {
    let id = match env
        .id
        .map(|raw| serde_json::from_str::<RequestId>(raw.get()))
    {
        None => None,
        Some(Ok(id)) => Some(id),
        Some(Err(_)) => {
            let reason = format!(
                "a message whose id is neither a number nor a string: {}",
                preview(env.id.map(RawValue::get).unwrap_or_default().as_bytes())
            );
            return invalid(reason, replies);
        }
    };
    let method = match env
        .method
        .map(|raw| serde_json::from_str::<Cow<'_, str>>(raw.get()))
    {
        None => None,
        Some(Ok(m)) => Some(m),
        Some(Err(_)) => return invalid("a message whose method is not a string".into(), replies),
    };
    let params = env.params.map(|p| p.to_owned());
    match (method, id) {
        (Some(method), None) if method == "$/cancel_request" => {
            match params
                .as_deref()
                .map(|p| serde_json::from_str::<CancelRequestParams>(p.get()))
            {
                Some(Ok(p)) => Inbound::CancelRequest { id: p.id },
                _ => Inbound::Skipped(Skipped::Invalid {
                    reason: "$/cancel_request without an id".into(),
                }),
            }
        }
        (Some(method), None) => Inbound::Notification {
            method: method.into_owned(),
            params,
        },
        (Some(method), Some(id)) => Inbound::Request {
            id,
            method: method.into_owned(),
            params,
        },
        (None, Some(id)) => {
            let result = match (env.result, env.error) {
                (_, Some(error)) => Err(lenient_error(error)),
                (Some(result), None) => Ok(result.to_owned()),
                (None, None) => Err(acp::Error::new(
                    codes::INVALID_REQUEST,
                    "the agent answered with neither a result nor an error",
                )),
            };
            if id == RequestId::Null {
                // An error about something we sent that the agent could not even parse.
                let reason = match &result {
                    Err(e) => format!("the agent reported an error without an id: {}", e.message),
                    Ok(_) => "a response with a null id".to_string(),
                };
                tracing::warn!("{reason}");
                return Inbound::Skipped(Skipped::Invalid { reason });
            }
            Inbound::Response { id, result }
        }
        (None, None) => invalid(
            "a JSON object that is neither request, notification nor response".into(),
            replies,
        ),
    }
}

/// Reports an invalid message and answers it -32600 (with a null id: its own is unusable).
fn invalid(reason: String, replies: &mut Vec<Vec<u8>>) -> Inbound {
    tracing::warn!("{reason}");
    replies.extend(
        encode(&OutError {
            jsonrpc: "2.0",
            id: &RequestId::Null,
            error: acp::Error::new(codes::INVALID_REQUEST, "Invalid request"),
        })
        .ok(),
    );
    Inbound::Skipped(Skipped::Invalid { reason })
}

fn trim_ascii(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if first.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = s {
        if last.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    s
}

/// Characters of a skipped line kept to show the user (a notice, Check's report): enough to
/// recognise a shell profile's greeting or a stack trace, never a whole flood.
pub const PREVIEW_CHARS: usize = 200;

fn preview(raw: &[u8]) -> String {
    // Never more than this many bytes are decoded: the line may be megabytes long.
    let head = &raw[..raw.len().min(PREVIEW_CHARS * 4)];
    let text = String::from_utf8_lossy(head);
    let mut s: String = text.chars().take(PREVIEW_CHARS).collect();
    if s.len() < text.len() || head.len() < raw.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn feed(input: &'static [u8], limits: Limits) -> (Vec<Inbound>, String) {
        let (agent_out, our_in) = tokio::io::duplex(1 << 20);
        let (our_out, mut agent_in) = tokio::io::duplex(1 << 20);
        let (conn, mut rx) = Connection::start(our_in, our_out, limits);
        let mut agent_out = agent_out;
        agent_out.write_all(input).await.unwrap();
        drop(agent_out);
        let mut items = Vec::new();
        'outer: while let Some(batch) = rx.recv().await {
            for item in batch {
                let last = matches!(item, Inbound::Closed { .. });
                items.push(item);
                if last {
                    break 'outer;
                }
            }
        }
        drop(conn);
        drop(rx);
        let mut written = String::new();
        agent_in.read_to_string(&mut written).await.unwrap();
        (items, written)
    }

    #[tokio::test]
    async fn classifies_and_keeps_order() {
        let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"a\":1}}\n\
{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"session/request_permission\",\"params\":{}}\n\
{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"stopReason\":\"end_turn\"}}\n\
{\"jsonrpc\":\"2.0\",\"id\":8,\"error\":{\"code\":-32000,\"message\":\"auth\"}}\n\
{\"jsonrpc\":\"2.0\",\"method\":\"$/cancel_request\",\"params\":{\"id\":\"abc\"}}\n\
{\"jsonrpc\":\"2.0\",\"method\":\"$/cancel_request\",\"params\":{\"requestId\":0}}\n";
        let (items, _) = feed(input, Limits::default()).await;
        assert!(
            matches!(&items[0], Inbound::Notification { method, params: Some(p) } if method == "session/update" && p.get() == "{\"a\":1}")
        );
        assert!(
            matches!(&items[1], Inbound::Request { id: RequestId::Str(s), method, .. } if s == "abc" && method == "session/request_permission")
        );
        assert!(
            matches!(&items[2], Inbound::Response { id: RequestId::Number(7), result: Ok(r) } if r.get().contains("end_turn"))
        );
        assert!(
            matches!(&items[3], Inbound::Response { id: RequestId::Number(8), result: Err(e) } if e.message == "auth")
        );
        assert!(
            matches!(&items[4], Inbound::CancelRequest { id: RequestId::Str(s) } if s == "abc")
        );
        assert!(
            matches!(
                &items[5],
                Inbound::CancelRequest {
                    id: RequestId::Number(0)
                }
            ),
            "ACP's spelling, as claude-agent-acp sends it"
        );
        assert!(matches!(&items[6], Inbound::Closed { error: None }));
    }

    #[tokio::test]
    async fn garbage_is_skipped_and_batches_refused() {
        let input = b"Welcome to bash!\n{not json\n\n[{\"jsonrpc\":\"2.0\",\"method\":\"x\"}]\n\
{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{}}";
        let (items, written) = feed(input, Limits::default()).await;
        assert!(
            matches!(&items[0], Inbound::Skipped(Skipped::NotJson { preview }) if preview == "Welcome to bash!")
        );
        assert!(matches!(
            &items[1],
            Inbound::Skipped(Skipped::NotJson { .. })
        ));
        assert!(matches!(&items[2], Inbound::Skipped(Skipped::Batch)));
        // The last line had no newline and still arrives.
        assert!(matches!(&items[3], Inbound::Notification { .. }));
        assert!(matches!(&items[4], Inbound::Closed { .. }));
        assert!(written.contains("-32600"), "{written}");
        assert!(written.contains("\"id\":null"), "{written}");
    }

    #[test]
    fn previews_are_cut_at_a_character_not_a_byte() {
        assert_eq!(preview(b"short"), "short");
        let long = "é".repeat(PREVIEW_CHARS + 10);
        let p = preview(long.as_bytes());
        assert_eq!(p.chars().count(), PREVIEW_CHARS + 1);
        assert!(p.starts_with("éé") && p.ends_with('…'), "{p}");
        // Exactly at the limit: nothing cut, nothing marked.
        let exact = "x".repeat(PREVIEW_CHARS);
        assert_eq!(preview(exact.as_bytes()), exact);
        // A flood on one line is not decoded whole.
        let flood = vec![b'y'; 10 * 1024 * 1024];
        assert_eq!(preview(&flood).chars().count(), PREVIEW_CHARS + 1);
    }

    #[tokio::test]
    async fn malformed_members_are_reported_and_answered() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32603}}\n\
{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"method\":\"fs/read_text_file\"}\n\
{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":7}\n";
        let (items, written) = feed(input, Limits::default()).await;
        // An error without a message still answers request 2.
        assert!(
            matches!(&items[0], Inbound::Response { id: RequestId::Number(2), result: Err(e) } if i32::from(e.code) == -32603 && e.message.contains("malformed"))
        );
        assert!(matches!(
            &items[1],
            Inbound::Skipped(Skipped::Invalid { .. })
        ));
        assert!(matches!(
            &items[2],
            Inbound::Skipped(Skipped::Invalid { .. })
        ));
        assert_eq!(written.matches("-32600").count(), 2, "{written}");
    }

    #[tokio::test]
    async fn over_long_lines_are_skipped_not_buffered() {
        let limits = Limits {
            max_line_bytes: 64,
            ..Limits::default()
        };
        let mut input = Vec::new();
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n");
        // Bigger than one 128 KiB read: the skip spans reads.
        input.extend(std::iter::repeat_n(b'x', 300_000));
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n");
        let input: &'static [u8] = Box::leak(input.into_boxed_slice());
        let (items, _) = feed(input, limits).await;
        assert!(matches!(&items[0], Inbound::Notification { method, .. } if method == "a"));
        assert!(
            matches!(&items[1], Inbound::Skipped(Skipped::TooLong { bytes }) if *bytes == 300_000)
        );
        assert!(matches!(&items[2], Inbound::Notification { method, .. } if method == "b"));

        // An over-long last line without its newline is reported too.
        let input: &'static [u8] = Box::leak(vec![b'y'; 1000].into_boxed_slice());
        let (items, _) = feed(input, limits).await;
        assert!(
            matches!(&items[0], Inbound::Skipped(Skipped::TooLong { bytes }) if *bytes == 1000)
        );
        assert!(matches!(&items[1], Inbound::Closed { .. }));
    }

    #[tokio::test]
    async fn ids_round_trip_as_numbers_or_strings() {
        let (agent_out, our_in) = tokio::io::duplex(4096);
        let (our_out, mut agent_in) = tokio::io::duplex(4096);
        let (conn, _rx) = Connection::start(our_in, our_out, Limits::default());
        conn.respond(&RequestId::Str("x-1".into()), Ok(serde_json::json!({})))
            .unwrap();
        conn.respond(&RequestId::Number(3), Ok(serde_json::json!({"a": 1})))
            .unwrap();
        let id = conn.request("session/new", &serde_json::json!({})).unwrap();
        assert_eq!(id, RequestId::Number(0));
        drop(conn);
        drop(agent_out);
        let mut written = String::new();
        agent_in.read_to_string(&mut written).await.unwrap();
        let lines: Vec<serde_json::Value> = written
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["id"], "x-1");
        assert_eq!(lines[1]["id"], 3);
        assert_eq!(lines[2]["id"], 0);
        assert_eq!(lines[2]["method"], "session/new");
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_consumer_stops_the_reader() {
        // Room for one batch and nobody reading: the agent must stall after what fits in the
        // pipe, the reader's buffer, one batch in the channel and one being sent, not after
        // the whole 5.7 MB it wants to write.
        use std::sync::atomic::AtomicUsize;
        let limits = Limits {
            inbound_capacity: 1,
            ..Limits::default()
        };
        let (mut agent_out, our_in) = tokio::io::duplex(256);
        let (our_out, _agent_in) = tokio::io::duplex(256);
        let (_conn, mut rx) = Connection::start(our_in, our_out, limits);
        let line = b"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{}}\n";
        let lines = 100_000;
        let written = Arc::new(AtomicUsize::new(0));
        let w = written.clone();
        let writer = tokio::spawn(async move {
            for _ in 0..lines {
                agent_out.write_all(line).await.unwrap();
                w.fetch_add(line.len(), Ordering::Relaxed);
            }
        });
        // On the paused clock this sleep ends only once every task waits, so the writer has
        // written all it can: no real pause has to be long enough for it.
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let last = written.load(Ordering::Relaxed);
        assert!(
            !writer.is_finished(),
            "the agent should be blocked by backpressure"
        );
        assert!(
            last < 3 * READ_BUFFER + 4096,
            "{last} bytes were taken in before the reader stopped"
        );
        let mut n = 0;
        while n < lines {
            for item in rx.recv().await.unwrap() {
                match item {
                    Inbound::Notification { .. } => n += 1,
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
        writer.await.unwrap();
    }
}
