//! The request body as chunks ([`ChunkedBody`]), for [`Chef::compile_chunked`].
//!
//! [`Chef::compile_chunked`]: crate::Chef::compile_chunked

use std::io::{self, IoSlice, Write};

use bytes::Bytes;

/// A compiled request body as an ordered list of [`Bytes`] chunks: their concatenation is,
/// byte for byte, the `body` that [`Chef::compile`](crate::Chef::compile) returns for the
/// same turn.
///
/// What a turn compiled afresh (the system layers, the last messages, the request's other
/// fields) is sliced out of one new buffer; the bytes chef keeps across turns (the
/// serialised tools, the serialised history prefix) are the cached buffers themselves,
/// shared by reference count. Building it copies neither, so a long conversation's turn
/// does not pay for copying its unchanged prefix. Cloning it clones the chunk list, not
/// the bytes.
///
/// Send it without joining the chunks:
///
/// * [`write_to`](Self::write_to) (or [`io_slices`](Self::io_slices) with
///   [`Write::write_vectored`]) writes it to a socket or file in vectored writes;
/// * as an HTTP streaming body, iterate it: it is an [`IntoIterator`] of [`Bytes`], the
///   chunk type of `hyper`/`http-body` and `reqwest`. With `reqwest` (feature `stream`):
///   `reqwest::Body::wrap_stream(futures_util::stream::iter(body.into_iter().map(Ok::<_,
///   std::io::Error>)))`; with `http-body-util`: a `StreamBody` of
///   `Ok(Frame::data(chunk))` items. Set `Content-Length` to [`len`](Self::len) yourself,
///   or a streaming client may fall back to chunked transfer encoding.
///
/// [`to_vec`](Self::to_vec) joins it in one copy when a contiguous buffer is needed.
#[derive(Debug, Clone, Default)]
pub struct ChunkedBody {
    chunks: Vec<Bytes>,
    len: usize,
}

impl ChunkedBody {
    /// The body made of `chunks`, in order.
    pub(crate) fn from_chunks(mut chunks: Vec<Bytes>) -> Self {
        chunks.retain(|c| !c.is_empty());
        let len = chunks.iter().map(Bytes::len).sum();
        Self { chunks, len }
    }

    /// The body's length in bytes (the sum of the chunks' lengths).
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the body has no bytes.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The chunks, in order. None is empty.
    #[must_use]
    pub fn chunks(&self) -> &[Bytes] {
        &self.chunks
    }

    /// The chunks, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Bytes> {
        self.chunks.iter()
    }

    /// The chunks as [`IoSlice`]s, for [`Write::write_vectored`].
    #[must_use]
    pub fn io_slices(&self) -> Vec<IoSlice<'_>> {
        self.chunks.iter().map(|c| IoSlice::new(c)).collect()
    }

    /// Writes the whole body to `out` in vectored writes (what
    /// `Write::write_all_vectored`, not yet stable, does).
    ///
    /// # Errors
    ///
    /// The first error of `out` other than [`io::ErrorKind::Interrupted`], and
    /// [`io::ErrorKind::WriteZero`] when `out` accepts no more bytes.
    pub fn write_to<W: Write + ?Sized>(&self, out: &mut W) -> io::Result<()> {
        let mut slices = self.io_slices();
        let mut slices = slices.as_mut_slice();
        while !slices.is_empty() {
            match out.write_vectored(slices) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => IoSlice::advance_slices(&mut slices, n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The body as one contiguous buffer (one copy).
    #[must_use]
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        for chunk in &self.chunks {
            out.extend_from_slice(chunk);
        }
        out
    }

    /// The chunks, in order.
    #[must_use]
    pub fn into_chunks(self) -> Vec<Bytes> {
        self.chunks
    }

    /// Whether the body's bytes are `other`'s.
    fn eq_slice(&self, mut other: &[u8]) -> bool {
        if self.len != other.len() {
            return false;
        }
        for chunk in &self.chunks {
            let Some((head, rest)) = other.split_at_checked(chunk.len()) else {
                return false;
            };
            if head != chunk.as_ref() {
                return false;
            }
            other = rest;
        }
        other.is_empty()
    }
}

/// Equal when the bytes are, however they are chunked.
impl PartialEq for ChunkedBody {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len
            && self
                .chunks
                .iter()
                .flat_map(|c| c.iter())
                .eq(other.chunks.iter().flat_map(|c| c.iter()))
    }
}

impl Eq for ChunkedBody {}

impl PartialEq<[u8]> for ChunkedBody {
    fn eq(&self, other: &[u8]) -> bool {
        self.eq_slice(other)
    }
}

impl PartialEq<Vec<u8>> for ChunkedBody {
    fn eq(&self, other: &Vec<u8>) -> bool {
        self.eq_slice(other)
    }
}

impl IntoIterator for ChunkedBody {
    type Item = Bytes;
    type IntoIter = std::vec::IntoIter<Bytes>;

    fn into_iter(self) -> Self::IntoIter {
        self.chunks.into_iter()
    }
}

impl<'a> IntoIterator for &'a ChunkedBody {
    type Item = &'a Bytes;
    type IntoIter = std::slice::Iter<'a, Bytes>;

    fn into_iter(self) -> Self::IntoIter {
        self.chunks.iter()
    }
}

impl From<ChunkedBody> for Vec<u8> {
    fn from(body: ChunkedBody) -> Self {
        body.to_vec()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::io::{self, IoSlice, Write};

    use bytes::Bytes;

    use super::ChunkedBody;

    fn body() -> ChunkedBody {
        ChunkedBody::from_chunks(vec![
            Bytes::from_static(b"{\"a\":"),
            Bytes::from_static(b"[1,2]"),
            Bytes::from_static(b",\"b\":3}"),
        ])
    }

    /// Accepts at most 4 bytes per call, from the first slices only.
    struct Trickle(Vec<u8>);

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(4);
            self.0.extend_from_slice(buf.get(..n).unwrap_or_default());
            Ok(n)
        }

        fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
            let mut left = 4;
            for buf in bufs {
                let n = buf.len().min(left);
                self.0.extend_from_slice(buf.get(..n).unwrap_or_default());
                left -= n;
                if left == 0 {
                    break;
                }
            }
            Ok(4 - left)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_forms_of_a_chunked_body_hold_the_same_bytes() {
        let body = body();
        let whole = b"{\"a\":[1,2],\"b\":3}".to_vec();
        assert_eq!(body.len(), whole.len());
        assert_eq!(body.to_vec(), whole);
        assert!(body == whole);
        assert!(body != b"{\"a\":[1,2],\"b\":4}".to_vec());
        let mut out = Trickle(Vec::new());
        body.write_to(&mut out).unwrap();
        assert_eq!(out.0, whole);
        let mut plain = Vec::new();
        body.write_to(&mut plain).unwrap();
        assert_eq!(plain, whole);
        let joined: Vec<u8> = body.clone().into_iter().flatten().collect();
        assert_eq!(joined, whole);
        let other = ChunkedBody::from_chunks(vec![Bytes::from(whole.clone())]);
        assert_eq!(body, other);
        assert_eq!(Vec::from(body), whole);
    }

    #[test]
    fn a_full_writer_is_an_error() {
        let mut space = [0_u8; 4];
        let mut out = &mut space[..];
        let err = body().write_to(&mut out).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WriteZero);
    }
}
