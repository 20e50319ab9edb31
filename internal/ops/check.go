package ops

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/store"
)

// CheckRuntime refuses, before anything is written, an llm agent with no
// model provider configured (saying exactly what to set) and an exec agent
// whose command cannot be found.
func CheckRuntime(sess *Session, runtime config.RuntimeName, model string) error {
	s := sess.Store
	if runtime == "" {
		runtime = s.Config().Runtime.Default
	}
	switch runtime {
	case config.RuntimeExec:
		return checkExec(s)
	case config.RuntimeLLM:
		return checkModel(sess, model, ", or use --runtime exec")
	}
	return nil
}

// modelTry says how to configure a model provider; orElse names the
// alternative the command has (a --runtime flag), if any.
const modelTry = "export OPENAI_API_KEY=... PM_MODEL=gpt-4o-mini (or OPENAI_BASE_URL=http://localhost:11434/v1 PM_MODEL=llama3.2 for Ollama)"

func checkModel(sess *Session, model, orElse string) error {
	s := sess.Store
	if _, err := llm.ProviderFromEnvKey(sess.getenv, s.Config().Model.APIKeyEnv, s.Config().Model.BaseURL, s.Config().Model.Name, model); err != nil {
		return errs.Failf(modelTry+orElse, "%v", err)
	}
	return nil
}

// checkExec refuses an exec task whose agent command cannot be found, rather
// than creating it and failing in the background.
func checkExec(s *store.Store) error {
	ex := s.Config().Runtime.Exec
	for _, argv := range [][]string{ex.Command, ex.RoleCommand} {
		if len(argv) == 0 {
			continue
		}
		if err := findCommand(s, argv[0]); err != nil {
			return errs.Failf(`install it, or point runtime.exec.command in `+s.ConfigPath()+` at your agent CLI, or use --runtime llm / --runtime none`,
				"agent command %q not found", argv[0])
		}
	}
	return nil
}

func findCommand(s *store.Store, cmd string) error {
	if !strings.ContainsRune(cmd, '/') {
		_, err := exec.LookPath(cmd)
		return err
	}
	if !filepath.IsAbs(cmd) {
		cmd = filepath.Join(s.ProjectDir(), cmd) // agents run in the project directory
	}
	_, err := os.Stat(cmd)
	return err
}

// CheckPO refuses, before anything is written, a message to an unknown prompt
// object or to an llm object with no model provider configured.
func CheckPO(sess *Session, name string) error {
	_, err := checkPO(sess, name)
	return err
}

// checkPO is CheckPO returning the object it checked.
func checkPO(sess *Session, name string) (*prompt.Object, error) {
	po, err := lookupPO(sess, name)
	if err != nil {
		return nil, err
	}
	switch po.Runtime {
	case "", config.RuntimeLLM:
		// pm send and pm talk have no --runtime flag: a model is the only way.
		return po, checkModel(sess, po.Model, "; prompt objects answer through a model")
	}
	return po, CheckRuntime(sess, po.Runtime, po.Model)
}
