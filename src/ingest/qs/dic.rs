//! QSPY dictionary files (`qspy -d`, `x.dic` beside `x.bin`): target options and the
//! dictionaries a target without in-band dictionary records needs.
//!
//! ```text
//! -v800            option lines: version, sizes (-T -O -F -S -E -Q -P -B -C), build (-t)
//! -T4 -O4          (several on one line, or `-T 4`, are accepted too)
//! Obj-Dic:         a section: a key-size line, then `0x<hex> <name>` lines, then `***`
//! 4
//! 0x20000E04 Philo_inst[0]
//! ***
//! Sig-Dic:         signal entries: `<decimal sig> 0x<hex obj> <name>`
//! 4
//! 00000004 0x00000000 EAT_SIG
//! ***
//! # a comment
//! ```
use super::records::Config;

/// Most entries kept per section: a real `.dic` has hundreds.
const MAX_ENTRIES: usize = 1 << 16;

/// A parsed `.dic` file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dic {
    /// `-v`: QP version (three digits).
    pub version: Option<u16>,
    /// `-T -O -F -S -E -Q -P -B -C` in that order: timestamp, object pointer, function
    /// pointer, signal, event size, queue counter, pool counter, pool block, time-event
    /// counter sizes.
    pub sizes: [Option<u8>; 9],
    /// `-t`: target build time.
    pub build: Option<String>,
    /// Objects: pointer, name.
    pub obj: Vec<(u64, String)>,
    /// Functions (states): pointer, name.
    pub fun: Vec<(u64, String)>,
    /// User records: record ID, name.
    pub usr: Vec<(u8, String)>,
    /// Signals: number, object (0 = global), name.
    pub sig: Vec<(u64, u64, String)>,
    /// Lines that could not be read: line number, what was wrong.
    pub problems: Vec<(u64, String)>,
}

const OPTIONS: &[u8; 9] = b"TOFSEQPBC";

#[derive(Clone, Copy, PartialEq)]
enum Section {
    None,
    Obj,
    Fun,
    Usr,
    Sig,
}

fn hex(s: &str) -> Option<u64> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    u64::from_str_radix(h, 16).ok()
}

impl Dic {
    /// Parses the text of a `.dic` file.
    pub fn parse(text: &str) -> Dic {
        let mut d = Dic::default();
        let mut section = Section::None;
        let mut want_key_size = false;
        for (i, raw) in text.lines().enumerate() {
            let n = i as u64 + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line.starts_with("***") {
                section = Section::None;
                continue;
            }
            let header = match line {
                "Obj-Dic:" => Some(Section::Obj),
                "Fun-Dic:" => Some(Section::Fun),
                "Usr-Dic:" => Some(Section::Usr),
                "Sig-Dic:" => Some(Section::Sig),
                _ => None,
            };
            if let Some(s) = header {
                section = s;
                want_key_size = true;
                continue;
            }
            if section == Section::None {
                if line.starts_with('-') {
                    d.options(line, n);
                } else {
                    d.problems.push((n, format!("'{line}' is neither an option nor a section")));
                }
                continue;
            }
            if std::mem::take(&mut want_key_size) && line.parse::<u8>().is_ok() {
                continue;
            }
            let mut words = line.splitn(3, char::is_whitespace).map(str::trim);
            let entry = match section {
                Section::Sig => {
                    let sig = words.next().and_then(|w| w.parse::<u64>().ok());
                    let rest = words.next().and_then(hex).zip(words.next());
                    match (sig, rest) {
                        (Some(s), Some((o, name))) if d.sig.len() < MAX_ENTRIES => {
                            d.sig.push((s, o, name.trim().to_string()));
                            true
                        }
                        (Some(_), Some(_)) => true,
                        _ => false,
                    }
                }
                _ => {
                    let mut kv = line.splitn(2, char::is_whitespace);
                    match kv.next().and_then(hex).zip(kv.next().map(str::trim)) {
                        Some((k, name)) if !name.is_empty() => {
                            let name = name.to_string();
                            match section {
                                Section::Obj if d.obj.len() < MAX_ENTRIES => d.obj.push((k, name)),
                                Section::Fun if d.fun.len() < MAX_ENTRIES => d.fun.push((k, name)),
                                Section::Usr => match u8::try_from(k) {
                                    Ok(r) => d.usr.push((r, name)),
                                    Err(_) => d
                                        .problems
                                        .push((n, format!("user record {k:#x} is beyond 255"))),
                                },
                                _ => {}
                            }
                            true
                        }
                        _ => false,
                    }
                }
            };
            if !entry {
                d.problems.push((n, format!("unreadable dictionary entry '{line}'")));
            }
        }
        d
    }

    /// Reads the options of one line (`-T4 -O 4 -v800`).
    fn options(&mut self, line: &str, n: u64) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let mut i = 0;
        while let Some(w) = words.get(i) {
            i += 1;
            let Some(opt) = w.strip_prefix('-') else {
                self.problems.push((n, format!("'{w}' is not an option")));
                continue;
            };
            let mut chars = opt.chars();
            let Some(letter) = chars.next() else { continue };
            let mut value = chars.as_str().to_string();
            if value.is_empty() && words.get(i).is_some_and(|v| !v.starts_with('-')) {
                value = words.get(i).map(|v| v.to_string()).unwrap_or_default();
                i += 1;
            }
            match letter {
                'v' => match value.parse::<u16>() {
                    Ok(v) => self.version = Some(v),
                    Err(_) => self.problems.push((n, format!("-v{value}: not a version"))),
                },
                't' => self.build = Some(value),
                _ => {
                    if let Some(at) = OPTIONS.iter().position(|&o| char::from(o) == letter) {
                        match value.parse::<u8>() {
                            Ok(v) => {
                                if let Some(slot) = self.sizes.get_mut(at) {
                                    *slot = Some(v);
                                }
                            }
                            Err(_) => {
                                self.problems.push((n, format!("-{letter}{value}: not a size")))
                            }
                        }
                    }
                    // Other QSPY options (-d, -q, -u, ...) say nothing about the target.
                }
            }
        }
    }

    /// The configuration the options give, when they give a version (the sizes default as
    /// QSPY's do: `-T4 -O4 -F4 -S2 -E2 -Q1 -P2 -B2 -C2`).
    pub fn config(&self) -> Option<Config> {
        let version = self.version?;
        let s = |i: usize, default: u8| self.sizes.get(i).copied().flatten().unwrap_or(default);
        Some(Config {
            version,
            tstamp: s(0, 4),
            obj: s(1, 4),
            fun: s(2, 4),
            sig: s(3, 2),
            evt: s(4, 2),
            queue: s(5, 1),
            pool_ctr: s(6, 2),
            pool_blk: s(7, 2),
            tevt: s(8, 2),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_options_and_sections() {
        let text = "-d241031\n-v800\n-q1\n-T4 -O 4\n-F4\n-S2\n-E2\n-Q1\n-P2\n-B2\n-C4\n\
                    -t241008_210100\n\n# comment\nObj-Dic:\n4\n0x08004F1C l_EXTI0_1_IRQHandler\n\
                    0x20000E04 Philo_inst[0]\n***\nFun-Dic:\n4\n0x08000A99 Philo_eating\n***\n\
                    Usr-Dic:\n1\n0x00000064 PHILO_STAT\n***\nSig-Dic:\n4\n\
                    00000010 0x00000000 TIMEOUT_SIG\n00000011 0x20000E04 HUNGRY_SIG\n***\nbogus\n";
        let d = Dic::parse(text);
        assert_eq!(d.version, Some(800));
        assert_eq!(d.build.as_deref(), Some("241008_210100"));
        let c = d.config().unwrap();
        assert_eq!((c.tstamp, c.obj, c.fun, c.sig, c.evt), (4, 4, 4, 2, 2));
        assert_eq!((c.queue, c.pool_ctr, c.pool_blk, c.tevt), (1, 2, 2, 4));
        assert_eq!(
            d.obj,
            vec![
                (0x0800_4F1C, "l_EXTI0_1_IRQHandler".into()),
                (0x2000_0E04, "Philo_inst[0]".into())
            ]
        );
        assert_eq!(d.fun, vec![(0x0800_0A99, "Philo_eating".into())]);
        assert_eq!(d.usr, vec![(100, "PHILO_STAT".into())]);
        assert_eq!(
            d.sig,
            vec![(10, 0, "TIMEOUT_SIG".into()), (11, 0x2000_0E04, "HUNGRY_SIG".into())]
        );
        assert_eq!(d.problems, vec![(33, "'bogus' is neither an option nor a section".into())]);
    }

    #[test]
    fn without_a_version_there_is_no_config() {
        let d = Dic::parse("-T2\nObj-Dic:\n4\nnot an entry\n***\n");
        assert_eq!(d.config(), None);
        assert_eq!(d.sizes[0], Some(2));
        assert_eq!(d.problems.len(), 1);
    }
}
