"""The language server: translates between LSP and the engine. No rule logic lives here."""
