package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/scangate/scangate/internal/scangate"
)

// AdminStore creates the first admin of a table.
type AdminStore interface {
	Bootstrap(ctx context.Context, u scangate.User, who scangate.Who) (scangate.User, error)
}

// PasswordHasher turns a password into the only form in which it is stored
// (internal/auth/password.Argon2id).
type PasswordHasher interface {
	Hash(password string) (string, error)
}

// Bootstrap creates the first admin of a deployment.
type Bootstrap struct {
	Store     AdminStore
	Passwords PasswordHasher
	Fold      func(string) string // internal/emailfold.Fold, handed in so that this package does not link it
	Who       scangate.Who        // for the audit entry: the admin CLI or the local stack
}

// Admin creates the first admin; it fails with a conflict when an active
// admin exists already or the name is taken.
func (b Bootstrap) Admin(ctx context.Context, username, email, password string) (scangate.User, error) {
	st, pw, fold := b.Store, b.Passwords, b.Fold
	var p scangate.Problems
	scangate.NewUser{Username: username, Email: email, Password: password, Role: scangate.RoleAdmin}.Validate(&p)
	key := fold(email)
	if len(p) == 0 {
		scangate.CheckEmailKey(&p, key)
	}
	if err := p.Err(); err != nil {
		return scangate.User{}, fmt.Errorf("bootstrap admin: %v", p)
	}
	hash, err := pw.Hash(password)
	if err != nil {
		return scangate.User{}, fmt.Errorf("bootstrap admin: %w", err)
	}
	now := scangate.At(time.Now())
	return st.Bootstrap(ctx, scangate.User{Username: username, Email: email, EmailKey: key, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}, b.Who)
}
