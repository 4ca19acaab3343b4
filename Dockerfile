FROM node:20-bookworm-slim
# ffmpeg converts voice notes to OGG/Opus and measures them (duration, waveform) at run time.
RUN apt-get update && apt-get install -y --no-install-recommends ffmpeg && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json vite.config.ts ./
COPY src ./src
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 DATA_DIR=/data
# The gateway runs as the image's unprivileged `node` user; /data is its own, 0700. /keys is where
# docker-compose.yml keeps the keys every node shares (a volume takes this owner and mode).
RUN mkdir -p /data /keys && chown node:node /data /keys && chmod 0700 /data /keys
USER node
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s CMD node -e "fetch('http://127.0.0.1:8080/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/main.js"]
