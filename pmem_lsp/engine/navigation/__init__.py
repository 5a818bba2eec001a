"""Navigation (docs/design.md §5): hover, links and definition, references, completion, symbols,
rename edits and code lenses. Plain data in editor vocabulary: root-relative paths, 0-based
lines, Python character offsets; the server converts to LSP."""

from .destinations import DocLink, Location, definition, document_links
from .hover_text import HoverText, hover
from .lens import lens_kinds, lens_title
from .path_completion import Completion, Completions, complete
from .referrers import references, references_to
from .refs import Ref, ref_graph
from .rename_edits import RenameResult, rename_edits
from .symbol_tree import DocSymbol, WorkspaceSymbol, document_symbols, workspace_symbols

__all__ = [
    "Completion", "Completions", "DocLink", "DocSymbol", "HoverText", "Location", "Ref", "RenameResult",
    "WorkspaceSymbol", "complete", "definition", "document_links", "document_symbols", "hover", "lens_kinds",
    "lens_title", "ref_graph", "references", "references_to", "rename_edits", "workspace_symbols",
]
