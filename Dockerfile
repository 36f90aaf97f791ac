# The groundstate server image: the server alone (no torch, no model runtimes), run as an unprivileged user.
# The API key is never baked in: it comes from the environment at run time (GROUNDSTATE_API_KEY).
#
#   docker build -t groundstate .                                    # official python base (Debian bookworm)
#   docker build --build-arg BASE=localhost/debian-python -t groundstate .   # any Debian base with python3-venv
ARG BASE=python:3.12-slim-bookworm

FROM ${BASE} AS build
RUN python3 -m venv /opt/groundstate
COPY pyproject.toml README.md /src/
COPY env_server /src/env_server
COPY shared /src/shared
COPY trainer /src/trainer
COPY groundstate /src/groundstate
COPY migrations /src/migrations
RUN /opt/groundstate/bin/pip install --no-cache-dir --disable-pip-version-check /src

FROM ${BASE}
COPY --from=build /opt/groundstate /opt/groundstate
RUN useradd --system --uid 10001 --home-dir /var/lib/groundstate --create-home groundstate
USER groundstate
WORKDIR /var/lib/groundstate
ENV PATH=/opt/groundstate/bin:$PATH \
    PYTHONUNBUFFERED=1
EXPOSE 8000
# Liveness and readiness: /healthz answers once the store answers (no curl in slim images).
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python3", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
ENTRYPOINT ["groundstate"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000", "--workers", "4", "--no-migrate"]
