//! A session and its [`Journal`]: replaying the journal into a session and appending what
//! changed since its last record (the record format and the store's side live in
//! [`crate::snapshot::journal`]).

use serde::de::Error as _;

use super::Chef;
use crate::{
    error::ChefError,
    snapshot::{
        Origin, RestoreOptions, SnapshotError, file,
        journal::{
            Fields, Head, Image, Journal, Loaded, Saved, delete_records, encode_delta, record_key,
            replay,
        },
    },
    store::{Entry, Expect, Namespace},
};

impl Journal {
    /// Replays the journal into `chef` (see [`Chef::restore`]: a failed load leaves the
    /// session unchanged) and makes later saves continue it. `None`, with the session
    /// untouched, when the store has no record of this session (or its only record is
    /// damaged: then it is left in place and not reported). A damaged last record after
    /// a good one is deleted (before the session is touched) and reported in
    /// [`Loaded::dropped`].
    pub async fn load(&mut self, chef: &mut Chef) -> Result<Option<Loaded>, ChefError> {
        self.load_with(chef, RestoreOptions::default()).await
    }

    /// [`load`](Self::load) with [`RestoreOptions`] (for example the snapshot's blocklist
    /// as it is, see [`Chef::restore_with`]).
    pub async fn load_with(
        &mut self,
        chef: &mut Chef,
        options: RestoreOptions,
    ) -> Result<Option<Loaded>, ChefError> {
        let Some(found) = replay(self.backend.as_ref(), &self.session).await? else {
            return Ok(None);
        };
        let fields = Fields::of_state(&found.replayed.snapshot.payload)
            .map_err(|source| SnapshotError::Serialize { source })?;
        if let Some((seq, version)) = found.dropped_version {
            let key = record_key(&self.session, seq)?;
            self.backend
                .delete(&Namespace::JOURNAL, &key, Expect::Version(version))
                .await
                .map_err(SnapshotError::from)?;
        }
        chef.restore_from(
            &found.replayed.snapshot,
            Origin::Journal {
                session: self.session.as_str().to_owned(),
                seq: found.replayed.loaded.seq,
            },
            options,
        )?;
        // What the records describe (not what the restore made of it: a blocklist widened
        // by the restore differs, and the next delta records the difference).
        self.head = Some(Head {
            image: Some(Image {
                mark: chef.journal_mark(),
                fields,
            }),
            ..found.head
        });
        Ok(Some(found.replayed.loaded))
    }

    /// Appends what changed in `chef` since the last record this journal wrote or loaded:
    /// a delta record, or a full record when one is due (see the module docs). The first
    /// save of a journal that was neither loaded nor saved before reads where the stored
    /// journal ends (a new session starts at record 1).
    ///
    /// A conflict ([`SnapshotError::is_conflict`]) means another writer appended first:
    /// nothing was written and this journal is unchanged; load again before saving. Any
    /// other error may come after the record was written (deleting records a compaction
    /// replaced failed): the journal stays consistent and replays to this save.
    pub async fn save(&mut self, chef: &Chef) -> Result<Saved, ChefError> {
        let mut head = match self.head.take() {
            Some(head) => head,
            None => self.find_end().await?,
        };
        let previous_full = head.full_seq;
        let appended = self.append(&mut head, chef).await;
        self.head = Some(head);
        let (seq, full, bytes) = appended?;
        // Compaction: the records before the previous full one are no longer needed by a
        // load, nor by a writer less than one compaction behind. (An error here comes after
        // the record was written: the journal is saved and continues.)
        let pruned = if full && previous_full > 0 {
            delete_records(self.backend.as_ref(), &self.session, Some(previous_full))
                .await
                .map_err(SnapshotError::from)?
        } else {
            0
        };
        Ok(Saved {
            seq,
            full,
            bytes,
            pruned,
        })
    }

    /// Writes the next record and moves `head` past it; on failure `head` is unchanged.
    /// Returns the record's number, whether it is full, and its size.
    async fn append(&self, head: &mut Head, chef: &Chef) -> Result<(u64, bool, usize), ChefError> {
        let mark = chef.journal_mark();
        let fields = chef
            .journal_fields()
            .map_err(|source| SnapshotError::Serialize { source })?;
        let delta = match &head.image {
            Some(image) if !self.compaction_due(head) => {
                let continues = image.mark.instance == mark.instance
                    && image.mark.epoch == mark.epoch
                    && image.mark.generation == mark.generation
                    && image.mark.len <= mark.len;
                continues.then(|| {
                    encode_delta(
                        head.next,
                        &head.last_checksum,
                        chef.turn(),
                        image.mark.len,
                        chef.history().get(image.mark.len..).unwrap_or_default(),
                        &image.fields,
                        &fields,
                    )
                })
            }
            _ => None,
        };
        let (bytes, full) = match delta {
            Some(bytes) => (bytes?, false),
            None => (file::to_vec(&chef.snapshot_ref(None))?, true),
        };
        let seq = head.next;
        let checksum = file::checksum_digits(&bytes).unwrap_or_default().to_owned();
        let size = bytes.len();
        let text = String::from_utf8(bytes).map_err(|e| SnapshotError::Serialize {
            source: serde_json::Error::custom(e),
        })?;
        let entry = Entry::new(text)
            .with_meta("kind", if full { "full" } else { "delta" })
            .with_meta("turn", chef.turn());
        let key = record_key(&self.session, seq)?;
        self.backend
            .put(&Namespace::JOURNAL, &key, entry, Expect::Absent)
            .await
            .map_err(SnapshotError::from)?;

        head.next = seq + 1;
        head.last_checksum = checksum;
        head.image = Some(Image { mark, fields });
        if full {
            head.full_seq = seq;
            head.full_bytes = size;
            head.deltas = 0;
            head.delta_bytes = 0;
        } else {
            head.deltas += 1;
            head.delta_bytes += size;
        }
        Ok((seq, full, size))
    }
}
