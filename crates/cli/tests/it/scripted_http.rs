//! A hand-written HTTP/1.1 server on 127.0.0.1 for the tests that need an endpoint
//! (`compile_map`, `eval`): one thread per connection, `Connection: close`, and a handler
//! that reads the request and decides the reply (or hangs, or closes without one), from a
//! script of replies per key ([`Scripted`]).

use std::{
    collections::HashMap,
    io::{BufRead as _, BufReader, Read as _, Write as _},
    net::{SocketAddr, TcpListener, TcpStream},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    thread,
};

/// One request as read off the socket.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) path: String,
    pub(crate) authorization: Option<String>,
    pub(crate) body: Vec<u8>,
}

/// The accept loop; stops when dropped.
pub(crate) struct Listener {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Listener {
    /// Listens on a free port and runs `handler` on its own thread for every request.
    pub(crate) fn start<H>(handler: H) -> Self
    where
        H: Fn(TcpStream, Request) + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        let handler = Arc::new(handler);
        thread::spawn(move || {
            for stream in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let handler = Arc::clone(&handler);
                thread::spawn(move || {
                    if let Some(request) = read_request(&stream) {
                        handler(stream, request);
                    }
                });
            }
        });
        Self { addr, stop }
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub(crate) fn endpoint(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
}

/// Replies scripted per key: each key's replies are used in order, the last one repeating.
pub(crate) struct Script<R>(Mutex<HashMap<String, Vec<R>>>);

impl<R: Clone> Script<R> {
    /// The next reply for `key`, whose script starts as a copy of `from`'s the first time
    /// `key` is asked for; `exhausted` when its script is empty, `None` when neither `key`
    /// nor `from` has one.
    pub(crate) fn next_from(&self, from: &str, key: &str, exhausted: R) -> Option<R> {
        let mut queues = self.0.lock().unwrap();
        if !queues.contains_key(key)
            && let Some(script) = queues.get(from).cloned()
        {
            queues.insert(key.to_owned(), script);
        }
        match queues.get_mut(key) {
            Some(q) if q.len() > 1 => Some(q.remove(0)),
            Some(q) => Some(q.first().cloned().unwrap_or(exhausted)),
            None => None,
        }
    }

    /// [`next_from`](Self::next_from) `key` itself.
    pub(crate) fn next(&self, key: &str, exhausted: R) -> Option<R> {
        self.next_from(key, key, exhausted)
    }
}

/// A scripted server: a [`Listener`] whose handler reads its reply from a [`Script`] and
/// records what it saw (`S`, one per request).
pub(crate) struct Scripted<S> {
    listener: Listener,
    seen: Arc<Mutex<Vec<S>>>,
}

impl<S: Clone + Send + 'static> Scripted<S> {
    /// Starts a server whose `handle` answers each request with the script's replies
    /// (`script`: each key's replies, in order).
    pub(crate) fn launch<'a, K, R, H>(
        script: impl IntoIterator<Item = (&'a K, Vec<R>)>,
        handle: H,
    ) -> Self
    where
        K: AsRef<str> + ?Sized + 'a,
        R: Clone + Send + 'static,
        H: Fn(TcpStream, Request, &Mutex<Vec<S>>, &Script<R>) + Send + Sync + 'static,
    {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let script = Script(Mutex::new(
            script
                .into_iter()
                .map(|(key, replies)| (key.as_ref().to_owned(), replies))
                .collect(),
        ));
        let seen2 = Arc::clone(&seen);
        let listener =
            Listener::start(move |stream, request| handle(stream, request, &seen2, &script));
        Self { listener, seen }
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub(crate) fn endpoint(&self) -> String {
        self.listener.endpoint()
    }

    /// What the server saw so far, in order.
    pub(crate) fn seen(&self) -> Vec<S> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

/// Reads the request line, the headers and a `Content-Length` body; `None` for a
/// connection closed before a request (the wake-up connection).
fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return None;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    let mut length = 0;
    let mut authorization = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').unwrap();
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().unwrap(),
            "authorization" => authorization = Some(value.trim().to_owned()),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    Some(Request {
        path,
        authorization,
        body,
    })
}

/// Writes a JSON reply with `status`, the extra `headers`, and `body`, then closes.
pub(crate) fn respond(mut stream: TcpStream, status: u16, headers: &[(&str, &str)], body: &str) {
    let mut head = format!(
        "HTTP/1.1 {status} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
    let _ = stream.flush();
}
