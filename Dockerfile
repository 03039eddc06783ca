# The OB-CAIE service on the embedded store; the store lives on the /data volume.
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md ./
COPY service ./service
COPY ontologies ./ontologies
COPY shapes ./shapes
COPY queries ./queries
# the worked example's data and the vaccine-education plugin package (checks, demonstration chatbot, the example)
COPY examples ./examples
RUN pip install --no-cache-dir -e . -e examples/vaccine && useradd --system --uid 10001 caie && mkdir /data && chown caie /data

USER caie
VOLUME ["/data"]
ENV CAIE_DATA_DIR=/data \
    CAIE_BASE_URL=http://localhost:8000/
EXPOSE 8000
# Tokens come from the deployment: set CAIE_TOKENS or CAIE_TOKENS_FILE (see README).
CMD ["caie", "serve", "--host", "0.0.0.0", "--port", "8000", "--examples"]
