# The compiled starter kits' sample bots, one image each (--target go-bot, rust-bot,
# typescript-bot). Their programs are built on the host by each kit's build.sh, then
# copied in: docker/build-images does both, so run it rather than this file alone:
#
#   docker/build-images                  # builds the kits, stages them, builds every image
#
# BASE_IMAGE must carry the C library the host built against (glibc 2.36 or newer:
# Debian bookworm, the default). NODE_IMAGE must carry Node.js 20+ at /usr/local/bin/node
# or on PATH. Each bot waits for its seat's token (docker/seat-entry.sh), then connects to
# PUSOY_ADDRESS.
ARG BASE_IMAGE=debian:bookworm-slim
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${BASE_IMAGE} AS bot-base
RUN groupadd --system --gid 10001 bot \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin bot
COPY docker/seat-entry.sh /usr/local/bin/seat-entry

FROM bot-base AS go-bot
COPY clients/go/bin/pusoy-bot /usr/local/bin/pusoy-bot
USER 10001:10001
ENTRYPOINT ["seat-entry", "pusoy-bot"]

FROM bot-base AS rust-bot
COPY clients/rust/target/release/sample-bot /usr/local/bin/pusoy-bot
USER 10001:10001
ENTRYPOINT ["seat-entry", "pusoy-bot"]

FROM ${NODE_IMAGE} AS typescript-bot
RUN groupadd --system --gid 10001 bot \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin bot
COPY docker/seat-entry.sh /usr/local/bin/seat-entry
# dist/ and the production node_modules, staged by docker/build-images.
COPY docker/.stage/typescript /opt/bot
USER 10001:10001
ENV NODE_ENV=production
ENTRYPOINT ["seat-entry", "node", "/opt/bot/dist/src/bot/main.js"]
