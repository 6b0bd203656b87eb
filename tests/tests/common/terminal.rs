//! A program on a real pty (portable-pty): what a person at a terminal sees and types.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use super::bin;

/// `acp-desk-cli` with `args` on a pty of its own.
pub struct Terminal {
    child: Box<dyn portable_pty::Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    seen: Arc<Mutex<Vec<u8>>>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Terminal {
    pub fn run(args: &[&str], cwd: &Path, env: &[(String, String)]) -> Terminal {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 30,
                cols: 200,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(bin("acp-desk-cli"));
        cmd.args(args);
        cmd.cwd(cwd);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let into = seen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                into.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Terminal {
            child,
            writer,
            seen,
            _master: pair.master,
        }
    }

    pub fn seen(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }

    /// Waits until the terminal shows `text` `times` times in all.
    pub fn wait_for_n(&self, text: &str, times: usize) {
        let deadline = Instant::now() + Duration::from_secs(40);
        while self.seen().matches(text).count() < times {
            assert!(
                Instant::now() < deadline,
                "never saw «{text}» ({times}x); the terminal showed:\n{}",
                self.seen()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn wait_for(&self, text: &str) {
        self.wait_for_n(text, 1);
    }

    /// Waits until `text` shows after the first `marker`.
    pub fn wait_after(&self, marker: &str, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(40);
        loop {
            let seen = self.seen();
            if seen.find(marker).is_some_and(|i| seen[i..].contains(text)) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "never saw «{text}» after «{marker}»; the terminal showed:\n{seen}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn type_in(&mut self, bytes: &[u8]) {
        // The program may still be setting up its read (a fresh login process).
        std::thread::sleep(Duration::from_millis(200));
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }

    pub fn exit_code(&mut self) -> u32 {
        self.child.wait().unwrap().exit_code()
    }
}
