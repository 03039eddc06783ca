// Verifies one Verifiable Credential file, or a Presentation of credentials (each credential's proof; the presentation
// itself is not signed), with digitalbazaar's implementation, offline: the document loader
// serves only the contexts named on the command line (the service's shipped files) and did:key documents, which
// the did:key driver makes from the key itself. Nothing is fetched.
//
//   node verify-credential.mjs CREDENTIAL-OR-PRESENTATION.json URL=FILE [URL=FILE ...]
//
// Prints {"verified": bool, "errors": [...]} and exits 0 when the credential verifies, 1 when it does not.
import {readFileSync} from 'node:fs';
import * as vc from '@digitalbazaar/vc';
import {DataIntegrityProof} from '@digitalbazaar/data-integrity';
import {cryptosuite as eddsaRdfc2022CryptoSuite} from '@digitalbazaar/eddsa-rdfc-2022-cryptosuite';
import * as Ed25519Multikey from '@digitalbazaar/ed25519-multikey';
import {driver} from '@digitalbazaar/did-method-key';

const [credentialFile, ...contextArgs] = process.argv.slice(2);
const contexts = new Map(contextArgs.map(arg => {
  const at = arg.indexOf('=');
  return [arg.slice(0, at), JSON.parse(readFileSync(arg.slice(at + 1), 'utf8'))];
}));

const didKeys = driver();
didKeys.use({multibaseMultikeyHeader: 'z6Mk', fromMultibase: Ed25519Multikey.from});

async function documentLoader(url) {
  if(contexts.has(url)) {
    return {contextUrl: null, documentUrl: url, document: contexts.get(url)};
  }
  if(url.startsWith('did:key:')) {
    const document = await didKeys.get({url});
    return {contextUrl: null, documentUrl: url, document};
  }
  throw new Error(`refused to load ${url}: not a shipped context or a did:key`);
}

const document = JSON.parse(readFileSync(credentialFile, 'utf8'));
const suite = new DataIntegrityProof({cryptosuite: eddsaRdfc2022CryptoSuite});
const result = [].concat(document.type).includes('VerifiablePresentation') ?
  await vc.verify({presentation: document, unsignedPresentation: true, suite, documentLoader}) :
  await vc.verifyCredential({credential: document, suite, documentLoader});
const errors = [];
const collect = error => {
  if(!error) {
    return;
  }
  errors.push(String(error.message || error));
  (error.errors || []).forEach(collect);
};
collect(result.error);
(result.results || []).forEach(r => collect(r.error));
(result.credentialResults || []).forEach(r => collect(r.error));
const verified = result.verified &&
  (result.credentialResults || []).every(r => r.verified);
console.log(JSON.stringify({verified, errors}));
process.exit(verified ? 0 : 1);
