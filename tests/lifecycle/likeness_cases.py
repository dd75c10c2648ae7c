"""Held-out sets for Checklist D's near-duplicate grouping (seed 001), written apart from
`memstrata.lifecycle.likeness`: each GROUP says one command in different words (it must
come out as one group); SINGLETONS are alike in words but different in meaning (another
command, folder or tool): each must stay alone.
"""

GROUPS = {
    "npm-evals": [
        "Test command: cd evals && npm test",
        "Run `npm test` from evals/",
        "Use `npm run test` in the evals folder",
        "To execute the evals, cd evals then npm test",
        "The eval suite is invoked by running npm test within ./evals",
        "npm test (run inside evals) runs the test suite",
        # the same command again, said in prose
        "The test command is `cd evals && npm test`.",
        "Tests: change into the evals directory and run npm's test script.",
        "The test suite lives in evals and is started with npm test.",
        "To test, go to evals and run npm test.",
        "Running the tests requires `cd evals` followed by `npm test`.",
        "Evals are tested via npm test (working directory: evals).",
    ],
    "pytest-unit": [
        "Run the unit tests with `pytest tests/unit`.",
        "Unit tests: python -m pytest tests/unit",
        "The unit suite runs via `python3 -m pytest tests/unit`",
        "uv run pytest tests/unit runs the unit tests",
        "pytest -q tests/unit executes the unit tests quietly",
    ],
    "make-build": [
        "Build the project with `make build`.",
        "Compile everything by running make build from the repository root.",
        "`make build` compiles the project",
        "The build target is make build.",
    ],
    "cargo-workspace": [
        "Run the Rust tests with cargo test --workspace",
        "cargo test --workspace runs every crate's tests",
        "Tests for all crates: `cargo t --workspace`",
    ],
    "compose-up": [
        "Start the stack with docker compose up -d",
        "`docker-compose up -d` brings up all services",
        "Bring the services up in the background via docker compose up -d",
        "Launch everything with docker compose up --detach",
    ],
    "go-api": [
        "Run go test ./... in the api folder",
        "cd api && go test ./...",
        "API tests: `go test ./...` from api/",
    ],
    "pnpm-web": [
        "Start the dev server: cd web && pnpm dev",
        "Run `pnpm run dev` inside web/",
        "The web frontend is served locally with pnpm dev (from the web directory)",
    ],
    "npm-e2e": [
        "cd e2e && npm test",
        "Run `npm test` in the e2e folder",
    ],
}

SINGLETONS = [
    "cd evals && npm run build",
    "Install dependencies with cd evals && npm install",
    "yarn test in the evals folder",
    "pytest tests/integration runs the integration tests",
    "make clean removes build artifacts",
    "cargo build --release produces the binary",
    "docker compose down stops the stack",
    "Run go vet ./... in the api folder",
    "cd web && pnpm build",
    "The evals folder holds the evaluation prompts.",
    "Lint the evals with cd evals && npm run lint",
]

# A second set, written after the grouping was rewritten, and measured once, blind.
GROUPS_B = {
    "gradle-test": [
        "Run `./gradlew test` to execute the JVM tests.",
        "JVM tests: gradlew test",
        "The Java test suite is started with ./gradlew test from the project root.",
        "Use the gradle wrapper: ./gradlew test",
    ],
    "tox-py311": [
        "Run tox -e py311 for the Python 3.11 tests",
        "`tox -e py311` runs the 3.11 env",
        "Python 3.11 tests: tox -e py311",
    ],
    "rspec": [
        "Run the specs with bundle exec rspec",
        "`bundle exec rspec` runs all specs",
        "The Ruby specs are executed via bundle exec rspec.",
    ],
    "terraform-plan": [
        "cd infra && terraform plan",
        "Preview infra changes with `terraform plan` in the infra folder",
        "Run terraform plan from infra/ to see the diff",
    ],
    "dotnet-test": [
        "dotnet test runs the C# tests",
        "Run the .NET tests via `dotnet test`",
        "C# tests: dotnet test",
    ],
    "just-lint": [
        "Lint everything with just lint",
        "`just lint` runs all linters",
        "The lint recipe is run with just: just lint",
    ],
    "kubectl-apply": [
        "Deploy with kubectl apply -f k8s/",
        "`kubectl apply -f k8s/` deploys the manifests",
        "Apply the manifests: kubectl apply -f k8s/",
    ],
    "yarn-docs": [
        "cd docs && yarn build",
        "Build the docs site with `yarn run build` inside docs/",
        "The documentation is built by running yarn build in the docs folder",
    ],
    "mvn-verify": [
        "mvn verify runs the integration checks",
        "Integration checks: `mvn -B verify`",
        "Use Maven: mvn verify",
    ],
}

SINGLETONS_B = [
    "./gradlew build assembles the jar",
    "tox -e lint runs the linters",
    "cd infra && terraform apply",
    "Run terraform plan from staging/ to preview staging",
    "dotnet build compiles the solution",
    "just fmt formats the code",
    "kubectl delete -f k8s/ tears everything down",
    "cd docs && yarn start",
    "cd web && yarn build",
    "mvn package builds the jar",
    "bundle exec rubocop checks style",
    "The infra folder contains Terraform modules.",
]

# A third set, written after the second was measured, and measured once, blind.
GROUPS_C = {
    "npm-lint-web": [
        "cd web && npm run lint",
        "Lint the frontend: `npm run lint` in web/",
        "Run the linter by executing npm's lint script inside the web directory",
    ],
    "pytest-smoke": [
        "pytest -k smoke runs the smoke tests",
        "Smoke tests: `python -m pytest -k smoke`",
        "Run only the smoke tests via pytest -k smoke",
    ],
    "compose-build": [
        "docker compose build rebuilds the images",
        "Rebuild images with `docker-compose build`",
        "To rebuild the containers, run docker compose build",
    ],
    "cargo-clippy": [
        "cargo clippy --all-targets is the lint step",
        "Lint Rust code using cargo clippy --all-targets",
        "Rust lint: `cargo clippy --all-targets`",
    ],
    "make-test-backend": [
        "cd backend && make test",
        "Backend tests: make test in the backend folder",
        "Run make test from backend/",
    ],
    "pnpm-install": [
        "Install deps with pnpm install",
        "`pnpm i` installs the dependencies",
        "Dependencies are installed by running pnpm install",
    ],
}

SINGLETONS_C = [
    "cd web && npm run build",
    "pytest -k slow runs the slow tests",
    "docker compose pull updates the images",
    "cargo fmt --check is the format step",
    "cd frontend && make test",
    "pnpm update refreshes the lockfile",
    "Run make test from the repository root",
    "The backend folder uses Django.",
]
