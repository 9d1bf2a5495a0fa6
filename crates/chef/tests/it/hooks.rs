//! Hooks a Rust loop uses (issue 21, part 4): subscriptions that end, and the compiled
//! payload handed to `on_compiled` subscribers, borrowed, on every target.

use std::sync::{Arc, Mutex};

use chef::{Chef, ChefConfig, ChefEvent, memory::SetOptions};
use chef_ir::{Message, Target};

use crate::support::{memory_with, two_tools};

fn recorder(chef: &mut Chef) -> (chef::Subscription, Arc<Mutex<Vec<ChefEvent>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let id = chef.subscribe(move |e| sink.lock().unwrap().push(e.clone()));
    (id, events)
}

#[test]
fn a_subscription_of_another_session_ends_nothing_here() {
    let mut a = Chef::new(ChefConfig::default());
    let mut b = Chef::new(ChefConfig::default());
    let (of_a, _) = recorder(&mut a);
    let (of_b, heard_by_b) = recorder(&mut b);
    let mut fork = b.fork();
    assert!(!b.unsubscribe(of_a), "session A's subscription is not B's");
    assert!(
        !fork.unsubscribe(of_b),
        "a fork does not carry its parent's subscriptions"
    );
    b.push(Message::user("hi"));
    b.compile(Target::Anthropic).unwrap();
    assert!(
        !heard_by_b.lock().unwrap().is_empty(),
        "B's subscriber still hears B"
    );
    assert!(b.unsubscribe(of_b));
    assert!(a.unsubscribe(of_a));
}

#[test]
fn an_ended_subscription_hears_nothing_more_memory_events_included() {
    let mut chef = Chef::new(ChefConfig::default()).with_memory(memory_with("k", "v", "d"));
    let (first, heard_by_first) = recorder(&mut chef);
    let (_second, heard_by_second) = recorder(&mut chef);
    chef.push(Message::user("hi"));
    chef.compile(Target::Anthropic).unwrap();
    chef.memory_mut()
        .unwrap()
        .set("k2", "v2", SetOptions::new())
        .unwrap();
    let before = heard_by_first.lock().unwrap().len();
    assert!(
        heard_by_first
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, ChefEvent::Memory(_)))
    );

    assert!(chef.unsubscribe(first));
    assert!(
        !chef.unsubscribe(first),
        "a second unsubscribe finds nothing"
    );
    chef.compile(Target::Anthropic).unwrap();
    chef.memory_mut()
        .unwrap()
        .set("k3", "v3", SetOptions::new())
        .unwrap();
    assert_eq!(heard_by_first.lock().unwrap().len(), before);
    // The other subscriber still hears everything, memory too.
    let second = heard_by_second.lock().unwrap();
    assert_eq!(
        second
            .iter()
            .filter(|e| matches!(e, ChefEvent::CompileDone { .. }))
            .count(),
        2
    );
    assert_eq!(
        second
            .iter()
            .filter(|e| matches!(e, ChefEvent::Memory(_)))
            .count(),
        2
    );
}

#[test]
fn a_subscription_ended_before_memory_is_attached_stays_ended() {
    let mut chef = Chef::new(ChefConfig::default());
    let (id, heard) = recorder(&mut chef);
    assert!(chef.unsubscribe(id));
    let mut chef = chef.with_memory(memory_with("k", "v", "d"));
    chef.memory_mut()
        .unwrap()
        .set("k2", "v2", SetOptions::new())
        .unwrap();
    assert!(heard.lock().unwrap().is_empty());
}

#[test]
fn on_compiled_sees_the_exact_bytes_and_meta_on_every_target_and_changes_nothing() {
    for target in Target::ALL {
        let build = || {
            let mut chef = Chef::new(ChefConfig::default()).with_memory(memory_with("k", "v", "d"));
            chef.register_tools(two_tools()).unwrap();
            chef.push(Message::user("first"));
            chef
        };
        let mut plain = build();
        let mut hooked = build();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let hook = hooked.on_compiled(move |c| {
            let mut chunks = 0;
            c.for_each_chunk(|_| chunks += 1);
            sink.lock().unwrap().push((
                c.target,
                c.body_to_vec(),
                c.body_len(),
                chunks,
                c.meta.turn,
                c.meta.memory_keys.clone(),
                c.notices.to_vec(),
            ));
        });
        for turn in 0..3u64 {
            let a = plain.compile(target).unwrap();
            let b = hooked.compile(target).unwrap();
            assert_eq!(a.body, b.body, "{target:?}: a hook changed the bytes");
            let seen = seen.lock().unwrap();
            let (t, body, len, chunks, meta_turn, keys, notices) = seen.last().unwrap();
            assert_eq!(*t, target);
            assert_eq!(body, &b.body);
            assert_eq!(*len, b.body.len());
            assert!(*chunks >= 1);
            assert_eq!(*meta_turn, turn);
            assert_eq!(keys, &b.meta.memory_keys);
            assert_eq!(notices, &b.notices);
            drop(seen);
            plain.push(Message::assistant("ok"));
            hooked.push(Message::assistant("ok"));
            plain.push(Message::user("again"));
            hooked.push(Message::user("again"));
        }
        // The chunked compile hands the hook the same bytes.
        let chunked = hooked.compile_chunked(target).unwrap();
        assert_eq!(
            seen.lock().unwrap().last().unwrap().1,
            chunked.body.to_vec()
        );
        assert!(hooked.unsubscribe(hook));
        let count = seen.lock().unwrap().len();
        hooked.compile(target).unwrap();
        assert_eq!(seen.lock().unwrap().len(), count);
    }
}
