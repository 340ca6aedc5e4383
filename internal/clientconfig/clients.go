package clientconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Client is an MCP client whose configuration file wrap knows: where the
// file is by default and where in it the server entries are.
type Client struct {
	// Name is the name given to --client ("claude-desktop").
	Name string
	// defaultPath returns the file the client reads on system goos, from
	// the environment (HOME, APPDATA, XDG_CONFIG_HOME) and the working
	// directory.
	defaultPath func(goos string, env Env) (string, error)
	// tables returns the objects of root that map server names to entries,
	// each with a label for messages.
	tables func(root *value) []table
}

// Env is what a default path is made of: environment variables, the home
// directory and a test for existing files. Tests give their own.
type Env struct {
	Getenv func(string) string
	Home   string
	Cwd    string
	Exists func(path string) bool
}

// SystemEnv returns the process's environment.
func SystemEnv() (Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Env{}, fmt.Errorf("finding the home directory: %w", err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return Env{}, fmt.Errorf("finding the working directory: %w", err)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	return Env{Getenv: os.Getenv, Home: home, Cwd: cwd, Exists: exists}, nil
}

// table is one object of server entries in a configuration file.
type table struct {
	label string // "mcpServers", `projects["/home/u/p"].mcpServers`
	obj   *value
}

// Clients lists the clients wrap knows, by name.
var Clients = []*Client{
	{Name: "claude-desktop", defaultPath: claudeDesktopPath, tables: topTable("mcpServers")},
	{Name: "cursor", defaultPath: homeFile(".cursor", "mcp.json"), tables: topTable("mcpServers")},
	{Name: "vscode", defaultPath: vscodePath, tables: vscodeTables},
	{Name: "claude-code", defaultPath: homeFile(".claude.json"), tables: claudeCodeTables},
}

// ClientNames returns the names of Clients.
func ClientNames() []string {
	names := make([]string, len(Clients))
	for i, c := range Clients {
		names[i] = c.Name
	}
	return names
}

// FindClient returns the client called name.
func FindClient(name string) (*Client, error) {
	for _, c := range Clients {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("unknown client %q (want %s)", name, strings.Join(ClientNames(), ", "))
}

// DefaultPath returns the configuration file the client reads on system
// goos ("darwin", "windows", "linux"...).
func (c *Client) DefaultPath(goos string, env Env) (string, error) {
	return c.defaultPath(goos, env)
}

// appData returns %APPDATA% (Windows), or an error naming it.
func appData(env Env) (string, error) {
	if d := env.Getenv("APPDATA"); d != "" {
		return d, nil
	}
	return "", errors.New("APPDATA is not set: give the configuration file with --config")
}

// userConfigDir is where an application keeps its user settings on goos,
// as the desktop clients do: Application Support on macOS, %APPDATA% on
// Windows, $XDG_CONFIG_HOME (or ~/.config) elsewhere.
func userConfigDir(goos string, env Env) (string, error) {
	switch goos {
	case "darwin":
		return filepath.Join(env.Home, "Library", "Application Support"), nil
	case "windows":
		return appData(env)
	}
	if d := env.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return d, nil
	}
	return filepath.Join(env.Home, ".config"), nil
}

// claudeDesktopPath: claude_desktop_config.json in the Claude folder of
// the user's configuration directory.
func claudeDesktopPath(goos string, env Env) (string, error) {
	dir, err := userConfigDir(goos, env)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "Claude", "claude_desktop_config.json"), nil
}

// vscodePath: the workspace's .vscode/mcp.json when the working directory
// has one, else the user profile's mcp.json.
func vscodePath(goos string, env Env) (string, error) {
	if ws := filepath.Join(env.Cwd, ".vscode", "mcp.json"); env.Exists(ws) {
		return ws, nil
	}
	dir, err := userConfigDir(goos, env)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "Code", "User", "mcp.json"), nil
}

// homeFile is a file under the home directory on every system (Cursor and
// Claude Code keep theirs there on Windows too).
func homeFile(elem ...string) func(string, Env) (string, error) {
	return func(_ string, env Env) (string, error) {
		return filepath.Join(append([]string{env.Home}, elem...)...), nil
	}
}

// topTable: the object at key at the top of the document.
func topTable(key string) func(*value) []table {
	return func(root *value) []table {
		if t := root.get(key); t != nil && t.kind == kindObject {
			return []table{{label: key, obj: t}}
		}
		return nil
	}
}

// vscodeTables: "servers" in mcp.json, "mcp"."servers" in settings.json.
func vscodeTables(root *value) []table {
	ts := topTable("servers")(root)
	if t := root.get("mcp").get("servers"); t != nil && t.kind == kindObject {
		ts = append(ts, table{label: "mcp.servers", obj: t})
	}
	return ts
}

// claudeCodeTables: the user's "mcpServers" and each project's (in
// ~/.claude.json), or a project's .mcp.json, which has the same top key.
func claudeCodeTables(root *value) []table {
	ts := topTable("mcpServers")(root)
	if projects := root.get("projects"); projects != nil && projects.kind == kindObject {
		for _, m := range projects.members {
			if t := m.val.get("mcpServers"); t != nil && t.kind == kindObject {
				ts = append(ts, table{label: "projects[" + strconv.Quote(m.key) + "].mcpServers", obj: t})
			}
		}
	}
	return ts
}
