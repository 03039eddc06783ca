"""Tests of step 4's target side: adapters, the executor and the demonstration chatbot, against a real
chat server process (tests/runs/chat_server.py)."""
