"""Tests of step 5's judges: rule judges declared in RDF on conversations with the demonstration chatbot."""
