"""Test support: fakes and helpers shared by the test suite."""
