"""Test support modules shared by several test files."""
