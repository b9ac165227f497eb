"""Turns a loop plan into code: the scan rewrite, the imports it needs, and text edits."""
