//! Diagnostics: spans into registered source files, and rustc-style rendering.
//!
//! Every user-facing error carries one or more [`Label`]s that point at byte
//! ranges of the Python source captured at decoration time. Sources are
//! registered once in a process-wide table (so a [`Span`] stays `Copy` and
//! small); the numeric ids never appear in generated code or in messages.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

/// Python source text of one function as captured at decoration time.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// File name shown in messages (`examples/sum_rows.py`).
    pub path: String,
    /// Text laid out so byte offsets give the real line and column in `path`:
    /// see [`SourceFile::from_function_text`].
    pub text: String,
}

impl SourceFile {
    /// Lays out the text of a function that starts at line `first_line`
    /// (1-based) of `path` so that the parser sees valid top-level code while
    /// spans keep the original line and column numbers: the text is preceded
    /// by blank lines, and an indented function gets an `if 1:` line above it.
    pub fn from_function_text(path: &str, text: &str, first_line: u32) -> SourceFile {
        let indented = text.starts_with(' ') || text.starts_with('\t');
        let mut out = String::new();
        let first_line = first_line.max(1) as usize;
        if indented && first_line >= 2 {
            out.push_str(&"\n".repeat(first_line - 2));
            out.push_str("if 1:\n");
        } else {
            out.push_str(&"\n".repeat(first_line - 1));
        }
        out.push_str(text);
        SourceFile {
            path: path.to_string(),
            text: out,
        }
    }

    /// 1-based (line, column) of a byte offset; the column counts characters.
    pub fn line_col(&self, offset: u32) -> (u32, u32) {
        let offset = (offset as usize).min(self.text.len());
        let before = &self.text[..offset];
        let line = before.matches('\n').count() as u32 + 1;
        let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
        let col = before[line_start..].chars().count() as u32 + 1;
        (line, col)
    }
}

/// Identifies a registered [`SourceFile`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct SourceId(pub u32);

/// The registered files, and each (path, text)'s id.
#[derive(Default)]
struct Registry {
    files: Vec<Arc<SourceFile>>,
    ids: HashMap<(String, String), SourceId>,
}

fn registry() -> &'static Mutex<Registry> {
    static REG: OnceLock<Mutex<Registry>> = OnceLock::new();
    REG.get_or_init(|| Mutex::new(Registry::default()))
}

/// Registers a source file and returns its id. The same path and text get
/// the same id: decorating a function again (a jit function made in a
/// loop, a module reloaded) adds nothing to the table.
/// The mark of a local's live range renamed by `syntax::webs`: the web
/// `K` of name `n` after its first is the variable `n#rK`.
pub const WEB_MARK: &str = "#r";

/// `text` with every `n#rK` (a renamed web, [`WEB_MARK`]) shown as the
/// user's name `n`.
pub fn shown_names(text: &str) -> String {
    if !text.contains(WEB_MARK) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(k) = rest.find(WEB_MARK) {
        let after = &rest[k + WEB_MARK.len()..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let named = rest[..k]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        out.push_str(&rest[..k]);
        if digits == 0 || !named {
            out.push_str(WEB_MARK);
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

pub fn register_source(file: SourceFile) -> SourceId {
    let mut reg = registry().lock().unwrap_or_else(|e| e.into_inner());
    let key = (file.path.clone(), file.text.clone());
    if let Some(id) = reg.ids.get(&key) {
        return *id;
    }
    reg.files.push(Arc::new(file));
    let id = SourceId((reg.files.len() - 1) as u32);
    reg.ids.insert(key, id);
    id
}

/// Looks up a registered source file.
pub fn source(id: SourceId) -> Option<Arc<SourceFile>> {
    let reg = registry().lock().unwrap_or_else(|e| e.into_inner());
    reg.files.get(id.0 as usize).cloned()
}

/// A byte range in a registered source file.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Span {
    pub file: SourceId,
    pub lo: u32,
    pub hi: u32,
}

impl Span {
    pub fn new(file: SourceId, lo: u32, hi: u32) -> Span {
        Span { file, lo, hi }
    }
    /// The smallest span covering both (same file assumed; else `self`).
    pub fn to(self, other: Span) -> Span {
        if self.file != other.file {
            return self;
        }
        Span {
            file: self.file,
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }
    /// The part of the span on its first line (without trailing blanks
    /// and `:`), so a compound statement's span points at its header, e.g.
    /// `for i in range(N)`.
    pub fn header(self) -> Span {
        let Some(file) = source(self.file) else {
            return self;
        };
        let lo = self.lo as usize;
        let hi = (self.hi as usize).min(file.text.len());
        if lo >= hi || !file.text.is_char_boundary(lo) || !file.text.is_char_boundary(hi) {
            return self;
        }
        let text = &file.text[lo..hi];
        let line = text.split('\n').next().unwrap_or(text);
        let trimmed = line.trim_end().trim_end_matches(':').trim_end();
        if trimmed.is_empty() {
            return self;
        }
        Span::new(self.file, self.lo, self.lo + trimmed.len() as u32)
    }
    /// `path:line:col` of the start of the span.
    pub fn location(&self) -> String {
        match source(self.file) {
            Some(f) => {
                let (l, c) = f.line_col(self.lo);
                format!("{}:{}:{}", f.path, l, c)
            }
            None => "<unknown>".to_string(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Severity {
    Error,
    Warning,
}

/// A span with a message. The primary label gets carets (`^^^`), the others
/// dashes (`---`).
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub span: Span,
    pub message: String,
    pub primary: bool,
}

/// One message for the user: what is wrong, where, and what to do about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub labels: Vec<Label>,
    /// Extra facts (`= note: ...`).
    pub notes: Vec<String>,
    /// Suggested fixes (`= help: ...`).
    pub help: Vec<String>,
    /// A value of the wrong type or kind reached an operation, a parameter
    /// annotation or a backend (the binding raises a `TypeError` subclass).
    pub type_error: bool,
    /// A name has no value where it is read: not defined, or a shape
    /// symbol nothing binds (the binding raises a `NameError` subclass).
    pub name_error: bool,
    /// The Python exception the program raises here when it runs
    /// (`"IndexError"`, `"OverflowError"`, `"ValueError"`): a statement
    /// that certainly runs and certainly fails is refused when compiling,
    /// and the binding raises a `CompileError` that is also this class.
    pub exception: Option<&'static str>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            labels: vec![],
            notes: vec![],
            help: vec![],
            type_error: false,
            name_error: false,
            exception: None,
        }
    }
    pub fn warning(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(message)
        }
    }
    /// Adds the primary label.
    pub fn at(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: true,
        });
        self
    }
    /// Adds a secondary label.
    pub fn also(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }
    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help.push(help.into());
        self
    }
    /// Marks a type error (see `type_error`).
    pub fn type_error(mut self) -> Diagnostic {
        self.type_error = true;
        self
    }
    /// Marks a name error (see `name_error`).
    pub fn name_error(mut self) -> Diagnostic {
        self.name_error = true;
        self
    }
    /// Marks the Python exception the program would raise (see
    /// `exception`).
    pub fn raises(mut self, exception: &'static str) -> Diagnostic {
        self.exception = Some(exception);
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The diagnostic with its texts through [`shown_names`].
    fn shown(&self) -> Diagnostic {
        let mut d = self.clone();
        d.message = shown_names(&d.message);
        for l in &mut d.labels {
            l.message = shown_names(&l.message);
        }
        for t in d.notes.iter_mut().chain(d.help.iter_mut()) {
            *t = shown_names(t);
        }
        d
    }

    /// Renders the diagnostic as plain text in the style of rustc:
    ///
    /// ```text
    /// error: name `out` is not defined
    ///  --> examples/typo.py:7:9
    ///   |
    /// 7 |         out[i] = parpy.operators.sum(x[i, :])
    ///   |         ^^^ not defined here
    ///   |
    ///   = help: the parameters are `x`, `y`, `N`
    /// ```
    pub fn render(&self) -> String {
        let level = match self.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
        };
        // One snippet per source file, in order of first appearance.
        let mut files: Vec<(SourceId, Arc<SourceFile>)> = vec![];
        for l in &self.labels {
            if files.iter().all(|(id, _)| *id != l.span.file) {
                if let Some(f) = source(l.span.file) {
                    files.push((l.span.file, f));
                }
            }
        }
        // (a renamed live range shows as the user's name)
        let d = self.shown();
        let mut group = Group::with_title(level.primary_title(d.message.as_str()));
        for (id, file) in &files {
            let len = file.text.len();
            let mut snippet = Snippet::source(file.text.as_str())
                .line_start(1)
                .path(file.path.as_str())
                .fold(true);
            for l in d.labels.iter().filter(|l| l.span.file == *id) {
                let lo = (l.span.lo as usize).min(len);
                let hi = (l.span.hi as usize).clamp(lo, len);
                let kind = if l.primary {
                    AnnotationKind::Primary
                } else {
                    AnnotationKind::Context
                };
                snippet = snippet.annotation(kind.span(lo..hi).label(l.message.as_str()));
            }
            group = group.element(snippet);
        }
        for n in &d.notes {
            group = group.element(Level::NOTE.message(n.as_str()));
        }
        for h in &d.help {
            group = group.element(Level::HELP.message(h.as_str()));
        }
        let report: [Group; 1] = [group];
        Renderer::plain().render(&report).to_string()
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

/// Renders several diagnostics, separated by blank lines; one that renders
/// as an earlier one is left out (a statement lowered twice, such as a
/// window's bounds or `divmod`'s two results, reports its error once).
pub fn render_all(diags: &[Diagnostic]) -> String {
    let mut seen = std::collections::HashSet::new();
    diags
        .iter()
        .map(|d| d.render())
        .filter(|r| seen.insert(r.clone()))
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_keeps_line_and_column() {
        let f = SourceFile::from_function_text("t.py", "    def f(x):\n        y = 1\n", 5);
        let off = f.text.find("y = 1").unwrap() as u32;
        assert_eq!(f.line_col(off), (6, 9));
    }

    #[test]
    fn the_same_source_registers_once() {
        // a function decorated again (in a loop) must not grow the table
        let text = "def again(x):\n    x[0] = 1\n";
        let a = register_source(SourceFile::from_function_text("again.py", text, 1));
        let n = registry().lock().unwrap().files.len();
        let b = register_source(SourceFile::from_function_text("again.py", text, 1));
        assert_eq!(a, b);
        assert_eq!(registry().lock().unwrap().files.len(), n);
        let c = register_source(SourceFile::from_function_text("other.py", text, 1));
        assert_ne!(a, c);
    }

    #[test]
    fn renders_rustc_style() {
        let f = SourceFile::from_function_text("t.py", "def f(x):\n    out[0] = x\n", 3);
        let lo = f.text.find("out").unwrap() as u32;
        let id = register_source(f);
        let d = Diagnostic::error("name `out` is not defined")
            .at(Span::new(id, lo, lo + 3), "not defined")
            .help("did you mean `x`?");
        let text = d.render();
        assert!(text.contains("error: name `out` is not defined"), "{text}");
        assert!(text.contains("t.py:4:5"), "{text}");
        assert!(text.contains("^^^ not defined"), "{text}");
        assert!(text.contains("help: did you mean `x`?"), "{text}");
    }
}
