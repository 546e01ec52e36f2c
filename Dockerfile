# The gateway for production: fronts the REST API at UPSTREAM_URL (required; the embedded
# sandbox is for development and is started only when UPSTREAM_URL is unset).
#   docker build -t merchant-wallet-gateway .
#   docker run -p 4000:4000 -e UPSTREAM_URL=https://api.example.com merchant-wallet-gateway

FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only. Node 24 runs the TypeScript sources itself (type stripping; the
# code uses only erasable syntax, enforced by tsconfig's erasableSyntaxOnly): there is no build step.
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
# Without src/sandbox (.dockerignore): the embedded sandbox is for development, and the gateway
# loads it only when UPSTREAM_URL is unset, which production refuses.
COPY src ./src
COPY schema ./schema
USER node
EXPOSE 4000
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# exec form: node is PID 1's child-free main process and receives SIGTERM directly. It then fails
# /readyz for SHUTDOWN_GRACE_MS (5 s) while still serving, and drains within SHUTDOWN_TIMEOUT_MS
# (10 s): give `docker stop` 20 s (--stop-timeout 20; Kubernetes' default of 30 s is enough).
CMD ["node", "src/main.ts"]
